package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/homeindex/homeindex/protocol"
)

// DocState says whether a document exists and whether it is live.
type DocState int

const (
	DocMissing DocState = iota // no row: the document was deleted
	DocLive                    // has paths, indexed
	DocRetired                 // missing: lost its last path (deleted or modified); dir kept, not indexed
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
	// LocalPath, when set, is the document's one path, outside any archive drive: its
	// dispatch order (a local path, after present drives' paths) is stored with the row, and
	// the caller marks it dirty with DirtyNew instead of Dirty, saving a lookup of its paths.
	LocalPath string
}

// InsertDocument creates a document row if it does not exist. It returns whether it created one.
func (t *Tx) InsertDocument(ctx context.Context, d DocRow) (bool, error) {
	created, err := t.InsertDocuments(ctx, []DocRow{d})
	if err != nil {
		return false, err
	}
	return created[0], nil
}

// insertDocs creates document rows whose ids are not stored.
var insertDocs = newMultiRow(`INSERT INTO documents(id, type, size, next, fields, version, retired, dispatch_tier, dispatch_path) VALUES `,
	`(?, ?, ?, ?, ?, ?, ?, ?, ?)`, ` ON CONFLICT(id) DO NOTHING`, 9)

// InsertDocuments is InsertDocument for each row in turn, in fewer statements: created[i]
// says whether rows[i] created its document (of two rows with one id, only the first can).
func (t *Tx) InsertDocuments(ctx context.Context, rows []DocRow) (created []bool, err error) {
	args := make([]any, 0, insertDocs.width*len(rows))
	for _, d := range rows {
		fields := []byte("{}")
		if len(d.Fields) > 0 {
			if fields, err = json.Marshal(d.Fields); err != nil {
				return nil, fmt.Errorf("catalog: document %s fields: %w", d.ID, err)
			}
		}
		var tier sql.NullInt64
		var path sql.NullString
		if d.LocalPath != "" {
			tier, path = sql.NullInt64{Int64: tierLocal, Valid: true}, sql.NullString{String: d.LocalPath, Valid: true}
		}
		args = append(args, d.ID, d.Type, d.Size, d.Next, string(fields), d.Version, d.Retired, tier, path)
	}
	made := make(map[string]bool, len(rows)) // ids a row created
	seen := make(map[string]bool, len(rows)) // ids of the pieces written so far
	err = insertDocs.each(args, func(stmt string, args []any) error {
		if err := t.insertPiece(ctx, stmt, args, seen, made); err != nil {
			return fmt.Errorf("catalog: insert document %s: %w", args[0], err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	created = make([]bool, len(rows))
	for i, d := range rows {
		created[i] = made[d.ID]
		delete(made, d.ID) // a later row with this id found it stored
	}
	return created, nil
}

// insertPiece runs one statement of InsertDocuments and adds to made the ids it created.
// Which those are: when it inserted as many rows as it had ids new to the call (seen says
// which were not; a first sync's case), all of them; otherwise the n rows it inserted, which
// hold the n rowids up to the last one (SQLite gives a new row the largest rowid plus one).
// RETURNING would tell too, at about a third more of the statement's cost.
func (t *Tx) insertPiece(ctx context.Context, stmt string, args []any, seen, made map[string]bool) error {
	var fresh []string
	for i := 0; i < len(args); i += insertDocs.width {
		if id := args[i].(string); !seen[id] {
			seen[id] = true
			fresh = append(fresh, id)
		}
	}
	res, err := t.tx.ExecContext(ctx, stmt, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return err
	}
	if n == int64(len(fresh)) {
		for _, id := range fresh {
			made[id] = true
		}
		return nil
	}
	last, err := res.LastInsertId()
	if err != nil {
		return err
	}
	rs, err := t.tx.QueryContext(ctx, `SELECT id FROM documents WHERE rowid > ?`, last-n)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return err
		}
		made[id] = true
	}
	return rs.Err()
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

// SetRetired marks or unmarks a document as retired. Unmarking also ends its missing period
// (SetMissing marks it with a time).
func (t *Tx) SetRetired(ctx context.Context, id string, retired bool) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE documents SET retired = ?, missing_since = CASE WHEN ? THEN missing_since END WHERE id = ?`, retired, retired, id)
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
	// Two counts over indexes (the primary key's and documents_retired) instead of one pass
	// over every row with its fields: 1M documents count in tens of milliseconds, not most of
	// a second. One statement, so both counts see the same snapshot.
	var all int64
	err = c.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM documents),
		(SELECT count(*) FROM documents INDEXED BY documents_retired WHERE retired = 1)`).Scan(&all, &retired)
	return all - retired, retired, err
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

// Documents renders several documents with two queries; ids that are not in the catalog
// (DocMissing) are absent from the map.
func (c *Catalog) Documents(ctx context.Context, ids []string) (map[string]Rendered, error) {
	docs, states, err := renderDocuments(ctx, c.r, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Rendered, len(docs))
	for i, d := range docs {
		out[d.ID] = Rendered{Doc: d, State: states[i]}
	}
	return out, nil
}

// Rendered is one document as Documents renders it.
type Rendered struct {
	Doc   protocol.Document
	State DocState
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func renderDocument(ctx context.Context, q querier, id string) (protocol.Document, DocState, error) {
	docs, states, err := renderDocuments(ctx, q, []string{id})
	if err != nil || len(docs) == 0 {
		return protocol.Document{}, DocMissing, err
	}
	return docs[0], states[0], nil
}

// renderDocuments renders several documents with two queries (documents, then their paths).
// Missing ids are left out.
func renderDocuments(ctx context.Context, q querier, ids []string) ([]protocol.Document, []DocState, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	// One SQL text whatever the number of ids (json_each), so the statement is prepared once.
	idList, err := json.Marshal(ids)
	if err != nil {
		return nil, nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT id, type, size, next, fields, version, retired, failures FROM documents
		WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`, string(idList))
	if err != nil {
		return nil, nil, fmt.Errorf("catalog: render: %w", err)
	}
	var docs []protocol.Document
	var states []DocState
	byID := map[string]int{}
	for rows.Next() {
		var d protocol.Document
		var fields, failures string
		var retired bool
		if err := rows.Scan(&d.ID, &d.Type, &d.Size, &d.Next, &fields, &d.Version, &retired, &failures); err != nil {
			rows.Close()
			return nil, nil, err
		}
		if failures != "" && failures != "{}" {
			d.Failures = json.RawMessage(failures)
		}
		if fields != "" && fields != "{}" {
			if err := json.Unmarshal([]byte(fields), &d.Fields); err != nil {
				rows.Close()
				return nil, nil, fmt.Errorf("catalog: render %s: fields: %w", d.ID, err)
			}
		}
		startPaths(&d)
		byID[d.ID] = len(docs)
		docs = append(docs, d)
		state := DocLive
		if retired {
			state = DocRetired
		}
		states = append(states, state)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT f.doc_id, f.path, f.mtime, f.drive IS NOT NULL, (f.drive IS NULL OR coalesce(dr.present, 0) = 1)
		FROM files f LEFT JOIN drives dr ON dr.name = f.drive WHERE f.doc_id IN (SELECT value FROM json_each(?))
		ORDER BY f.doc_id, f.path`, string(idList))
	if err != nil {
		return nil, nil, fmt.Errorf("catalog: render paths: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var e protocol.PathEntry
		var archived, available bool
		if err := rows.Scan(&id, &e.Path, &e.Mtime, &archived, &available); err != nil {
			return nil, nil, err
		}
		i, ok := byID[id]
		if !ok {
			continue
		}
		addPath(&docs[i], e, archived, available)
	}
	return docs, states, rows.Err()
}

// startPaths gives a rendered document no paths yet (addPath adds them).
func startPaths(d *protocol.Document) {
	d.Paths, d.PathsList, d.Offline = protocol.Paths{}, []string{}, true
}

// addPath adds a path to a rendered document, with the fields derived from its paths.
func addPath(d *protocol.Document, e protocol.PathEntry, archived, available bool) {
	d.Paths = append(d.Paths, e)
	d.PathsList = append(d.PathsList, e.Path)
	d.Mtime = max(d.Mtime, e.Mtime)
	d.HasArchivePaths = d.HasArchivePaths || archived
	d.Offline = d.Offline && !available
	d.Copies = len(d.Paths)
}

// inList builds "?, ?, ?" and its arguments.
func inList(ids []string) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", "), args
}
