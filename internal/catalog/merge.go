package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// MergeOutcome says what Merge did.
type MergeOutcome int

const (
	MergeApplied  MergeOutcome = iota // fields merged, `next` advanced if it was this module
	MergeReplayed                     // this job's result was merged before: nothing changed
	MergeStale                        // no such job in flight (file changed, requeued, unknown)
)

func (o MergeOutcome) String() string {
	return [...]string{"applied", "replayed", "stale"}[o]
}

// MergeInput is one module result, validated by the merger.
type MergeInput struct {
	DocID, Module, Token string
	// Fields are the module-owned top-level fields to set (core fields already removed).
	Fields map[string]json.RawMessage
	// Content: the module's content.json was written, so its chunks must be rebuilt.
	Content bool
	// Pipeline is the module names in order, to advance `next`.
	Pipeline []string
	At       time.Time
}

// Merge applies a module result in one transaction: it checks the job is the one in flight,
// merges the fields, advances `next` when it names this module, records the merge (so a replay
// is a no-op), and dirties the document, its drives' markers and, with content, its chunks.
func (c *Catalog) Merge(ctx context.Context, in MergeInput) (MergeOutcome, error) {
	out := MergeStale
	err := c.Update(ctx, func(t *Tx) error {
		var seen int
		if err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM merges WHERE doc_id = ? AND module = ? AND token = ?`,
			in.DocID, in.Module, in.Token).Scan(&seen); err != nil {
			return err
		}
		if seen > 0 {
			out = MergeReplayed
			return nil
		}
		j, ok, err := t.Job(ctx, in.DocID, in.Module)
		if err != nil || !ok || j.Token != in.Token {
			return err
		}
		state, err := t.DocumentState(ctx, in.DocID)
		if err != nil {
			return err
		}
		if state != DocLive {
			return t.DeleteJob(ctx, in.DocID, in.Module)
		}
		if err := t.mergeFields(ctx, in.DocID, in.Fields); err != nil {
			return err
		}
		if err := t.moveOn(ctx, in.DocID, in.Module, in.Pipeline); err != nil {
			return err
		}
		if err := t.setFailure(ctx, in.DocID, in.Module, nil); err != nil {
			return err
		}
		if err := t.DeleteJob(ctx, in.DocID, in.Module); err != nil {
			return err
		}
		if _, err := t.tx.ExecContext(ctx, `INSERT INTO merges(doc_id, module, token, at) VALUES(?, ?, ?, ?)`,
			in.DocID, in.Module, in.Token, in.At.UnixMilli()); err != nil {
			return err
		}
		if in.Content {
			if err := t.Dirty(ctx, ChunksKey(in.DocID, in.Module)); err != nil {
				return err
			}
		}
		out = MergeApplied
		return t.dirtyDocAndDrives(ctx, in.DocID)
	})
	if err != nil {
		return MergeStale, fmt.Errorf("catalog: merge %s/%s: %w", in.DocID, in.Module, err)
	}
	return out, nil
}

// Park records a job that failed MAX_ATTEMPTS times: the job row stays (parked, with its
// reason), the document's `failures` names the module, and the document moves on down the
// chain so one poison file never blocks its drive. A token that is not the job's is ignored.
func (c *Catalog) Park(ctx context.Context, docID, module, token string, attempts int, reason string, pipeline []string, at time.Time) (bool, error) {
	parked := false
	err := c.Update(ctx, func(t *Tx) error {
		j, ok, err := t.Job(ctx, docID, module)
		if err != nil || !ok || (token != "" && j.Token != token) {
			return err
		}
		j.State, j.Attempt, j.Reason, j.Updated = JobParked, attempts, reason, at
		if err := t.PutJob(ctx, j); err != nil {
			return err
		}
		f, _ := json.Marshal(map[string]any{"reason": reason, "attempts": attempts, "at": at.UTC().Format(time.RFC3339)})
		if err := t.setFailure(ctx, docID, module, f); err != nil {
			return err
		}
		if err := t.moveOn(ctx, docID, module, pipeline); err != nil {
			return err
		}
		parked = true
		return t.dirtyDocAndDrives(ctx, docID)
	})
	return parked, err
}

// mergeFields sets module-owned top-level fields (shallow: a field's value is replaced whole,
// like Meilisearch's partial update).
func (t *Tx) mergeFields(ctx context.Context, id string, fields map[string]json.RawMessage) error {
	if len(fields) == 0 {
		return nil
	}
	var cur string
	if err := t.tx.QueryRowContext(ctx, `SELECT fields FROM documents WHERE id = ?`, id).Scan(&cur); err != nil {
		return err
	}
	m := map[string]json.RawMessage{}
	if cur != "" {
		if err := json.Unmarshal([]byte(cur), &m); err != nil {
			return fmt.Errorf("stored fields: %w", err)
		}
	}
	for k, v := range fields {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `UPDATE documents SET fields = ? WHERE id = ?`, string(b), id)
	return err
}

// moveOn advances `next` past module when it names it.
func (t *Tx) moveOn(ctx context.Context, id, module string, pipeline []string) error {
	next := ""
	for i, m := range pipeline {
		if m == module && i+1 < len(pipeline) {
			next = pipeline[i+1]
		}
	}
	_, err := t.tx.ExecContext(ctx, `UPDATE documents SET next = ? WHERE id = ? AND next = ?`, next, id, module)
	return err
}

// setFailure sets (value non-nil) or clears a module's entry in `failures`.
func (t *Tx) setFailure(ctx context.Context, id, module string, value json.RawMessage) error {
	var cur string
	if err := t.tx.QueryRowContext(ctx, `SELECT failures FROM documents WHERE id = ?`, id).Scan(&cur); err != nil {
		return err
	}
	m := map[string]json.RawMessage{}
	if cur != "" {
		_ = json.Unmarshal([]byte(cur), &m)
	}
	if _, had := m[module]; !had && value == nil {
		return nil
	}
	if value == nil {
		delete(m, module)
	} else {
		m[module] = value
	}
	b, _ := json.Marshal(m)
	_, err := t.tx.ExecContext(ctx, `UPDATE documents SET failures = ? WHERE id = ?`, string(b), id)
	return err
}

// dirtyDocAndDrives dirties a document and the markers of every drive it has a path on, so a
// drive flips to ready the moment its last pending file is merged.
func (t *Tx) dirtyDocAndDrives(ctx context.Context, id string) error {
	rows, err := t.tx.QueryContext(ctx, `SELECT DISTINCT drive FROM files WHERE doc_id = ? AND drive IS NOT NULL`, id)
	if err != nil {
		return err
	}
	keys := []string{DocKey(id)}
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return err
		}
		keys = append(keys, DriveKey(d))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return t.Dirty(ctx, keys...)
}

// MergeCount returns how many results were merged for a (document, module): more than one
// for the same content and module version means a double merge.
func (c *Catalog) MergeCount(ctx context.Context, docID, module string) (int, error) {
	var n int
	err := c.r.QueryRowContext(ctx, `SELECT count(*) FROM merges WHERE doc_id = ? AND module = ?`, docID, module).Scan(&n)
	return n, err
}
