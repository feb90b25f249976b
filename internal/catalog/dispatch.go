package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/homeindex/homeindex/protocol"
)

// Dispatch tiers: paths on present archive drives go first (a drive may be unplugged soon),
// then local paths.
const (
	tierDrive = 0
	tierLocal = 1
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
		case onDrive && (!tier.Valid || tier.Int64 == tierLocal):
			tier, path = sql.NullInt64{Int64: tierDrive, Valid: true}, sql.NullString{String: p, Valid: true}
		case !onDrive && !tier.Valid:
			tier, path = sql.NullInt64{Int64: tierLocal, Valid: true}, sql.NullString{String: p, Valid: true}
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
// (its conditions repeat the partial index's WHERE, so SQLite may use it) walks the dispatch
// index from its start and skips at most the module's dispatched jobs, so a
// refill costs O(window), whatever the collection's size.
func (c *Catalog) Candidates(ctx context.Context, module string, limit int) ([]Candidate, error) {
	rows, err := c.r.QueryContext(ctx, `SELECT d.id, d.dispatch_tier, d.dispatch_path FROM documents d INDEXED BY documents_dispatch
		WHERE d.next = ? AND d.next != '' AND d.retired = 0 AND d.dispatch_tier IS NOT NULL
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

// ItemDocuments renders documents for queue items: as Document, with the path modules should
// open (the dispatch path: available, on a present drive first) as the first key of `paths`.
// Documents that are gone, retired or without an available path are left out. Two queries
// for the whole batch.
func (c *Catalog) ItemDocuments(ctx context.Context, ids []string) ([]protocol.Document, error) {
	docs, states, err := renderDocuments(ctx, c.r, ids)
	if err != nil {
		return nil, err
	}
	in, args := inList(ids)
	rows, err := c.r.QueryContext(ctx, `SELECT id, dispatch_path FROM documents WHERE id IN (`+in+`) AND dispatch_path IS NOT NULL`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	first := map[string]string{}
	for rows.Next() {
		var id, p string
		if err := rows.Scan(&id, &p); err != nil {
			return nil, err
		}
		first[id] = p
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := docs[:0]
	for i, doc := range docs {
		path, ok := first[doc.ID]
		if states[i] != DocLive || !ok {
			continue
		}
		for j, p := range doc.Paths {
			if p.Path == path {
				copy(doc.Paths[1:j+1], doc.Paths[:j])
				doc.Paths[0] = p
				break
			}
		}
		out = append(out, doc)
	}
	return out, nil
}
