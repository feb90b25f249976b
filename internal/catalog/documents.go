package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/homeindex/homeindex/protocol"
)

// DocState says whether a document exists and whether it is live.
type DocState int

const (
	DocMissing DocState = iota // no row: the document was deleted
	DocLive                    // has paths, indexed
	DocRetired                 // lost its last path to a modification: dir kept, not indexed
)

// DocRow is the stored part of a document (the rest is derived from files and drives).
type DocRow struct {
	ID      string
	Type    string
	Size    int64
	Next    string
	Fields  map[string]json.RawMessage
	Version int
	Retired bool
}

// InsertDocument creates a document row if it does not exist. It returns whether it created one.
func (t *Tx) InsertDocument(ctx context.Context, d DocRow) (bool, error) {
	fields := []byte("{}")
	if len(d.Fields) > 0 {
		var err error
		if fields, err = json.Marshal(d.Fields); err != nil {
			return false, fmt.Errorf("catalog: document %s fields: %w", d.ID, err)
		}
	}
	res, err := t.tx.ExecContext(ctx, `INSERT INTO documents(id, type, size, next, fields, version, retired)
		VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING`,
		d.ID, d.Type, d.Size, d.Next, string(fields), d.Version, d.Retired)
	if err != nil {
		return false, fmt.Errorf("catalog: insert document %s: %w", d.ID, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// DocumentState returns whether a document exists and is retired, inside the transaction.
func (t *Tx) DocumentState(ctx context.Context, id string) (DocState, error) {
	var retired bool
	err := t.tx.QueryRowContext(ctx, `SELECT retired FROM documents WHERE id = ?`, id).Scan(&retired)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return DocMissing, nil
	case err != nil:
		return DocMissing, fmt.Errorf("catalog: document %s: %w", id, err)
	case retired:
		return DocRetired, nil
	}
	return DocLive, nil
}

// SetRetired marks or unmarks a document as retired.
func (t *Tx) SetRetired(ctx context.Context, id string, retired bool) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE documents SET retired = ? WHERE id = ?`, retired, id)
	if err != nil {
		return fmt.Errorf("catalog: retire %s: %w", id, err)
	}
	return nil
}

// DeleteDocument removes a document row (its files must be gone).
func (t *Tx) DeleteDocument(ctx context.Context, id string) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM documents WHERE id = ?`, id); err != nil {
		return fmt.Errorf("catalog: delete document %s: %w", id, err)
	}
	return nil
}

// CountDocuments returns live and retired document counts.
func (c *Catalog) CountDocuments(ctx context.Context) (live, retired int64, err error) {
	err = c.r.QueryRowContext(ctx, `SELECT coalesce(sum(retired = 0), 0), coalesce(sum(retired = 1), 0) FROM documents`).Scan(&live, &retired)
	return live, retired, err
}

// DocumentIDs calls fn with every document id and whether it is retired.
func (c *Catalog) DocumentIDs(ctx context.Context, fn func(id string, retired bool) error) error {
	rows, err := c.r.QueryContext(ctx, `SELECT id, retired FROM documents ORDER BY id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var retired bool
		if err := rows.Scan(&id, &retired); err != nil {
			return err
		}
		if err := fn(id, retired); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Document renders a document from the catalog: stored fields plus paths and derived fields.
// present reports which archive drives are present now (for offline and paths order).
func (c *Catalog) Document(ctx context.Context, id string) (protocol.Document, DocState, error) {
	return renderDocument(ctx, c.r, id)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func renderDocument(ctx context.Context, q querier, id string) (protocol.Document, DocState, error) {
	var d protocol.Document
	var fields, failures string
	var retired bool
	err := q.QueryRowContext(ctx, `SELECT id, type, size, next, fields, version, retired, failures FROM documents WHERE id = ?`, id).
		Scan(&d.ID, &d.Type, &d.Size, &d.Next, &fields, &d.Version, &retired, &failures)
	if errors.Is(err, sql.ErrNoRows) {
		return d, DocMissing, nil
	}
	if err != nil {
		return d, DocMissing, fmt.Errorf("catalog: render %s: %w", id, err)
	}
	if failures != "" && failures != "{}" {
		d.Failures = json.RawMessage(failures)
	}
	if fields != "" && fields != "{}" {
		if err := json.Unmarshal([]byte(fields), &d.Fields); err != nil {
			return d, DocMissing, fmt.Errorf("catalog: render %s: fields: %w", id, err)
		}
	}
	rows, err := q.QueryContext(ctx, `SELECT f.path, f.mtime, f.drive IS NOT NULL, (f.drive IS NULL OR coalesce(dr.present, 0) = 1)
		FROM files f LEFT JOIN drives dr ON dr.name = f.drive WHERE f.doc_id = ? ORDER BY f.path`, id)
	if err != nil {
		return d, DocMissing, fmt.Errorf("catalog: render %s: paths: %w", id, err)
	}
	defer rows.Close()
	d.Paths = protocol.Paths{}
	d.PathsList = []string{}
	d.Offline = true
	for rows.Next() {
		var e protocol.PathEntry
		var archived, available bool
		if err := rows.Scan(&e.Path, &e.Mtime, &archived, &available); err != nil {
			return d, DocMissing, err
		}
		d.Paths = append(d.Paths, e)
		d.PathsList = append(d.PathsList, e.Path)
		if e.Mtime > d.Mtime {
			d.Mtime = e.Mtime
		}
		d.HasArchivePaths = d.HasArchivePaths || archived
		if available {
			d.Offline = false
		}
	}
	if err := rows.Err(); err != nil {
		return d, DocMissing, err
	}
	d.Copies = len(d.Paths)
	if retired {
		return d, DocRetired, nil
	}
	return d, DocLive, nil
}
