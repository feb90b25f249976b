package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/homeindex/homeindex/protocol"
)

// refreshDispatch recomputes a document's dispatch tier and path from its paths and the drives'
// presence. Called for every dirtied document, so the dispatch index is always current.
func (t *Tx) refreshDispatch(ctx context.Context, id string) error {
	rows, err := t.tx.QueryContext(ctx, `SELECT f.path, f.drive IS NOT NULL
		FROM files f LEFT JOIN drives dr ON dr.name = f.drive
		WHERE f.doc_id = ? AND (f.drive IS NULL OR coalesce(dr.present, 0) = 1) ORDER BY f.path`, id)
	if err != nil {
		return fmt.Errorf("catalog: dispatch order %s: %w", id, err)
	}
	var tier sql.NullInt64
	var path sql.NullString
	for rows.Next() {
		var p string
		var onDrive bool
		if err := rows.Scan(&p, &onDrive); err != nil {
			rows.Close()
			return err
		}
		switch {
		case onDrive && (!tier.Valid || tier.Int64 == 1):
			tier, path = sql.NullInt64{Int64: 0, Valid: true}, sql.NullString{String: p, Valid: true}
		case !onDrive && !tier.Valid:
			tier, path = sql.NullInt64{Int64: 1, Valid: true}, sql.NullString{String: p, Valid: true}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `UPDATE documents SET dispatch_tier = ?, dispatch_path = ? WHERE id = ?`, tier, path, id)
	return err
}

// Candidates returns up to limit documents waiting for module: `next` is the module, the
// document is live and has an available path, and no job of it is dispatched or parked. Order:
// tier A (a path on a present drive) before tier B, then the path modules will open. The query
// walks the dispatch index from its start and skips at most the module's dispatched jobs, so a
// refill costs O(window), whatever the collection's size.
func (c *Catalog) Candidates(ctx context.Context, module string, limit int) ([]Candidate, error) {
	rows, err := c.r.QueryContext(ctx, `SELECT d.id, d.dispatch_tier, d.dispatch_path FROM documents d
		WHERE d.next = ? AND d.retired = 0 AND d.dispatch_tier IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.doc_id = d.id AND j.module = ?)
		ORDER BY d.dispatch_tier, d.dispatch_path LIMIT ?`, module, module, limit)
	if err != nil {
		return nil, fmt.Errorf("catalog: candidates %s: %w", module, err)
	}
	defer rows.Close()
	var out []Candidate
	for rows.Next() {
		var cd Candidate
		if err := rows.Scan(&cd.ID, &cd.Tier, &cd.Path); err != nil {
			return nil, err
		}
		out = append(out, cd)
	}
	return out, rows.Err()
}

// Candidate is a document ready to be dispatched.
type Candidate struct {
	ID   string
	Tier int // 0: on a present drive (tier A), 1: other (tier B)
	Path string
}

// ItemDocument renders a document for a queue item: as Document, with the path modules should
// open (the dispatch path: available, on a present drive first) as the first key of `paths`.
func (c *Catalog) ItemDocument(ctx context.Context, id string) (doc protocol.Document, ok bool, err error) {
	doc, state, err := c.Document(ctx, id)
	if err != nil || state != DocLive {
		return doc, false, err
	}
	var path sql.NullString
	if err := c.r.QueryRowContext(ctx, `SELECT dispatch_path FROM documents WHERE id = ?`, id).Scan(&path); err != nil {
		return doc, false, err
	}
	if !path.Valid {
		return doc, false, nil
	}
	for i, p := range doc.Paths {
		if p.Path == path.String {
			copy(doc.Paths[1:i+1], doc.Paths[:i])
			doc.Paths[0] = p
			break
		}
	}
	return doc, true, nil
}
