package catalog

import (
	"context"
	"fmt"
)

// NextValues lists the distinct `next` values of live documents with their counts.
func (c *Catalog) NextValues(ctx context.Context) (map[string]int64, error) {
	rows, err := c.r.QueryContext(ctx, `SELECT next, count(*) FROM documents WHERE retired = 0 GROUP BY next`)
	if err != nil {
		return nil, fmt.Errorf("catalog: next values: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var n string
		var k int64
		if err := rows.Scan(&n, &k); err != nil {
			return nil, err
		}
		out[n] = k
	}
	return out, rows.Err()
}

// MoveNext sets `next` to to on every document whose `next` is from, and dirties those
// documents and their drives' markers (drives flip to pending while work is due again). It
// costs O(documents moved): used at start when MODULES changed.
func (c *Catalog) MoveNext(ctx context.Context, from, to string) (int, error) {
	var ids []string
	rows, err := c.r.QueryContext(ctx, `SELECT id FROM documents WHERE next = ?`, from)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	total := len(ids)
	for len(ids) > 0 {
		n := min(len(ids), 2000)
		part := ids[:n]
		ids = ids[n:]
		err := c.Update(ctx, func(t *Tx) error {
			for _, id := range part {
				if _, err := t.tx.ExecContext(ctx, `UPDATE documents SET next = ? WHERE id = ? AND next = ?`, to, id, from); err != nil {
					return err
				}
				if err := t.dirtyDocAndDrives(ctx, id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("catalog: move next %q → %q: %w", from, to, err)
		}
	}
	return total, nil
}

// DeleteModuleJobs forgets a module's jobs in a state ("" = all states): the module was removed,
// or its uid changed and its queued items are purged.
func (c *Catalog) DeleteModuleJobs(ctx context.Context, module string, state JobState) (int64, error) {
	var n int64
	err := c.Update(ctx, func(t *Tx) error {
		q, args := `DELETE FROM jobs WHERE module = ?`, []any{module}
		if state != "" {
			q += ` AND state = ?`
			args = append(args, string(state))
		}
		res, err := t.tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

// RequeueParked turns parked jobs back into queued ones with their new tokens (the queue
// re-dispatched them: on request, on a uid change, at start).
func (c *Catalog) RequeueParked(ctx context.Context, module string, tokens map[string]string, at int64) error {
	return c.Update(ctx, func(t *Tx) error {
		for id, tok := range tokens {
			if _, err := t.tx.ExecContext(ctx, `UPDATE jobs SET state = 'queued', token = ?, attempt = 1, reason = '', updated = ?
				WHERE doc_id = ? AND module = ? AND state = 'parked'`, tok, at, id, module); err != nil {
				return err
			}
		}
		return nil
	})
}

// HasPending reports whether any live document still has a module due (cheap: the partial
// index on next).
func (c *Catalog) HasPending(ctx context.Context) (bool, error) {
	var yes bool
	err := c.r.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM documents WHERE next != '' AND retired = 0)`).Scan(&yes)
	return yes, err
}
