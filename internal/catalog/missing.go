package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Meta keys of missing files and the mass-removal hold.
const (
	// MetaMissingReport is the last sync's report of held directories and of a held mass
	// removal (JSON, written by filesync).
	MetaMissingReport = "missing_report"
	// MetaMissingConfirm is set by the operator (sync --confirm-missing, POST
	// /api/missing/confirm): the next sync carries out the removals it would otherwise hold.
	MetaMissingConfirm = "missing_confirm"
	// MetaMissingPurged counts documents purged after MISSING_RETENTION, over the catalog's life.
	MetaMissingPurged = "missing_purged"
)

// migrateMissing adds documents.missing_since to a catalog made before it existed. A document
// is missing (retired = 1) from missing_since, Unix seconds; the purge finds expired ones
// through documents_missing. Retired rows older than the column count as missing from now.
func migrateMissing(db *sql.DB) error {
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_table_info('documents') WHERE name = 'missing_since'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		if _, err := db.Exec(`ALTER TABLE documents ADD COLUMN missing_since INTEGER`); err != nil {
			return err
		}
	}
	if _, err := db.Exec(`UPDATE documents SET missing_since = ? WHERE retired = 1 AND missing_since IS NULL`, time.Now().Unix()); err != nil {
		return err
	}
	_, err := db.Exec(`CREATE INDEX IF NOT EXISTS documents_missing ON documents(missing_since) WHERE missing_since IS NOT NULL`)
	return err
}

// SetMissing marks a document missing (retired: out of the index, its by-id directory kept)
// since at, unless it already was. Its chain state (next, fields, failures) is kept, so it
// comes back as it was when its content reappears (SetRetired(false)).
func (t *Tx) SetMissing(ctx context.Context, id string, at time.Time) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE documents SET retired = 1, missing_since = coalesce(missing_since, ?) WHERE id = ?`, at.Unix(), id)
	if err != nil {
		return fmt.Errorf("catalog: missing %s: %w", id, err)
	}
	return nil
}

// CountMissing returns how many documents are missing.
func (c *Catalog) CountMissing(ctx context.Context) (int64, error) {
	var n int64
	err := c.r.QueryRowContext(ctx, `SELECT count(*) FROM documents WHERE missing_since IS NOT NULL`).Scan(&n)
	return n, err
}

// MissingSince returns when each missing document went missing (Verify uses it).
func (c *Catalog) MissingSince(ctx context.Context, fn func(id string, since time.Time, paths int) error) error {
	rows, err := c.r.QueryContext(ctx, `SELECT d.id, coalesce(d.missing_since, 0), (SELECT count(*) FROM files f WHERE f.doc_id = d.id)
		FROM documents d WHERE d.retired = 1 OR d.missing_since IS NOT NULL ORDER BY d.id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var since int64
		var paths int
		if err := rows.Scan(&id, &since, &paths); err != nil {
			return err
		}
		at := time.Time{}
		if since != 0 {
			at = time.Unix(since, 0)
		}
		if err := fn(id, at, paths); err != nil {
			return err
		}
	}
	return rows.Err()
}

// PurgeMissing deletes up to limit documents missing since before, in one transaction: their
// rows, job rows and merge records. Each one's doc: key is dirtied, so the outbox removes its
// by-id directory and any index entry. Found through documents_missing, the cost follows the
// number purged, not the collection. It returns the purged ids (fewer than limit: none left).
func (c *Catalog) PurgeMissing(ctx context.Context, before time.Time, limit int) ([]string, error) {
	var ids []string
	err := c.Update(ctx, func(t *Tx) error {
		ids = ids[:0]
		rows, err := t.tx.QueryContext(ctx, `SELECT id FROM documents WHERE missing_since IS NOT NULL AND missing_since < ?
			AND NOT EXISTS (SELECT 1 FROM files f WHERE f.doc_id = documents.id) ORDER BY missing_since LIMIT ?`, before.Unix(), limit)
		if err != nil {
			return fmt.Errorf("catalog: expired missing documents: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			for _, q := range []string{`DELETE FROM jobs WHERE doc_id = ?`, `DELETE FROM merges WHERE doc_id = ?`, `DELETE FROM documents WHERE id = ?`} {
				if _, err := t.tx.ExecContext(ctx, q, id); err != nil {
					return fmt.Errorf("catalog: purge %s: %w", id, err)
				}
			}
			if err := t.Dirty(ctx, DocKey(id)); err != nil {
				return err
			}
		}
		if len(ids) == 0 {
			return nil
		}
		var total int64
		if err := t.tx.QueryRowContext(ctx, `SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?), 0)`, MetaMissingPurged).Scan(&total); err != nil {
			return err
		}
		return t.SetMeta(ctx, MetaMissingPurged, fmt.Sprint(total+int64(len(ids))))
	})
	return ids, err
}

// TakeMissingConfirm reports whether the operator confirmed held removals, and clears the
// confirmation, inside the transaction that carries them out.
func (t *Tx) TakeMissingConfirm(ctx context.Context) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM meta WHERE key = ?`, MetaMissingConfirm)
	if err != nil {
		return false, fmt.Errorf("catalog: missing confirmation: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// ConfirmMissing records the operator's confirmation for the next sync.
func (c *Catalog) ConfirmMissing(ctx context.Context, at time.Time) error {
	return c.Update(ctx, func(t *Tx) error { return t.SetMeta(ctx, MetaMissingConfirm, at.UTC().Format(time.RFC3339)) })
}

// PathCounts returns how many paths each of ids has (ids with none are absent).
func (c *Catalog) PathCounts(ctx context.Context, ids []string) (map[string]int, error) {
	out := make(map[string]int, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), 5000)
		list, err := json.Marshal(ids[:n])
		if err != nil {
			return nil, err
		}
		ids = ids[n:]
		rows, err := c.r.QueryContext(ctx, `SELECT doc_id, count(*) FROM files WHERE doc_id IN (SELECT value FROM json_each(?)) GROUP BY doc_id`, string(list))
		if err != nil {
			return nil, fmt.Errorf("catalog: path counts: %w", err)
		}
		for rows.Next() {
			var id string
			var k int
			if err := rows.Scan(&id, &k); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = k
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
