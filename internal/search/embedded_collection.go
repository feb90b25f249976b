package search

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/homeindex/homeindex/internal/sqlitedb"
)

// embeddedCollection is one collection of the embedded backend; its tables are
// <name>_docs and <name>_fts.
type embeddedCollection struct {
	ix   *embeddedIndex
	name string

	// mu guards settings. Configure holds it while committing a change (which also swaps
	// the expression indexes) and Search while it runs, so a search never combines old
	// settings with a new schema.
	mu       sync.RWMutex
	settings Settings // normalized; changed only under ix.writeMu and mu

	// Documents written since the planner statistics were refreshed, and the collection
	// size then; guarded by ix.writeMu.
	written, analyzedRows int64

	// loading: a first load runs (BeginLoad), the expression indexes are dropped until it
	// ends. Changed under ix.writeMu; searches read it.
	loading atomic.Bool
}

var _ Collection = (*embeddedCollection)(nil)

// Upsert writes all documents in one transaction.
func (c *embeddedCollection) Upsert(ctx context.Context, docs []json.RawMessage) error {
	u, err := c.PrepareUpsert(docs)
	if err != nil {
		return err
	}
	return u.Write(ctx)
}

// PrepareUpsert parses the documents and computes their facets, sort keys and text, on every
// core for a large batch, without the writer's lock: the work of Upsert but its SQL.
func (c *embeddedCollection) PrepareUpsert(docs []json.RawMessage) (PreparedUpsert, error) {
	return c.prepareCanonical(docs, nil)
}

// prepareCanonical is PrepareUpsert for documents of which canonical marks those in
// json.Marshal's form (canonicalPreparer): those are prepared straight from their bytes
// (prepareRaw), the others parsed first.
func (c *embeddedCollection) prepareCanonical(docs []json.RawMessage, canonical []bool) (PreparedUpsert, error) {
	// Facets and text are computed before the writer's lock, from the settings of now: the
	// writer, one at a time, then only runs SQL. Settings changed in between (rare) mean
	// computing them again under the lock.
	u := &embeddedUpsert{c: c}
	c.mu.RLock()
	u.settings = c.settings
	c.mu.RUnlock()
	u.keyed = c.keyedSorts(u.settings)
	spec := u.settings.spec()
	prepared := make([]upsertDoc, len(docs))
	problems := make([]string, len(docs))
	errs := make([]error, len(docs))
	inParallel(len(docs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			isCanonical := canonical != nil && canonical[i]
			var ok bool
			if isCanonical {
				if prepared[i], ok = prepareRaw(docs[i], spec, u.keyed); ok {
					continue
				}
			}
			var p parsedDoc
			if p, problems[i] = parseDoc(i, docs[i], isCanonical); problems[i] == "" {
				prepared[i], errs[i] = prepareParsed(p, spec, u.keyed)
			}
		}
	})
	if err := docProblems(problems); err != nil {
		return nil, fmt.Errorf("upsert %s: %w", c.name, err)
	}
	if err := firstError(errs); err != nil {
		return nil, fmt.Errorf("upsert %s: %w", c.name, err)
	}
	u.prepared = lastOfEach(prepared)
	return u, nil
}

// embeddedUpsert is an upsert prepared with the settings of its preparation; each prepared
// document holds its parsed one, or no value when it was prepared from its bytes (prepareRaw).
type embeddedUpsert struct {
	c        *embeddedCollection
	settings Settings
	keyed    []string
	prepared []upsertDoc
}

// Write writes the prepared documents in one transaction.
func (u *embeddedUpsert) Write(ctx context.Context) error {
	c, prepared := u.c, u.prepared
	if len(prepared) == 0 {
		return nil
	}
	c.ix.writeMu.Lock()
	defer c.ix.writeMu.Unlock()
	s, keyed := u.settings, u.keyed
	if !settingsEqual(s, c.settings) { // stable now: changes need ix.writeMu
		s, keyed = c.settings, c.keyedSorts(c.settings)
		parsed := make([]parsedDoc, len(prepared))
		for i, d := range prepared {
			if parsed[i] = d.parsedDoc; d.value == nil { // prepared from its bytes (prepareRaw), which were checked then
				var problem string
				if parsed[i], problem = parseDoc(i, d.raw, true); problem != "" {
					return fmt.Errorf("upsert %s: %s", c.name, problem)
				}
			}
		}
		var err error
		if prepared, err = prepareUpserts(parsed, s.spec(), keyed); err != nil {
			return fmt.Errorf("upsert %s: %w", c.name, err)
		}
	}
	// Plain tx.ExecContext: the writer's connection keeps these statements prepared
	// (internal/sqlitedb), where a tx.Prepare would parse them again on every call.
	fs := newFacetSQL(c.name+"_docs", s.spec().declared(), keyed)
	ftsDel := `DELETE FROM ` + c.name + `_fts WHERE rowid = ?`
	ftsIns := `INSERT INTO ` + c.name + `_fts(rowid, text) VALUES (?, ?)`
	// A first load's documents are almost all new (loading is stable under ix.writeMu): each is
	// inserted first, and only those whose id was stored already are read and updated. That
	// spares the lookup of every new id before its insert, which probes the same index again.
	insertFirst := c.loading.Load()
	var changes []tableChange
	var args []any // an insert's arguments, reused from row to row
	err := c.inTx(ctx, func(tx writeTx) error {
		changes = changes[:0]
		// writePage writes a page of documents. With lookup, their stored rows are read first
		// and a document without one is inserted; without, each is inserted unless its id is
		// stored, and those come back (stored) for a pass with lookup.
		writePage := func(page []upsertDoc, lookup bool) (stored []upsertDoc, err error) {
			var current map[string]storedRow
			ins := fs.insNew
			if lookup {
				if current, err = storedFacets(ctx, tx, fs, page); err != nil {
					return nil, err
				}
				ins = fs.ins
			}
			for _, d := range page {
				vals := d.blobs
				old, ok := current[d.id]
				seq := old.seq
				// The text is written only when it changed: a module hop that adds no words (a
				// thumbnail, a module with nothing for this file) spares the full-text index
				// its delete, insert and the segment merges they cause.
				textChanged := !ok || !old.textHash.Valid || old.textHash.Int64 != d.hash
				if !ok {
					args = append(append(args[:0], d.id, d.raw, d.hash), vals...)
					res, err := tx.ExecContext(ctx, ins, args...)
					if err != nil {
						return nil, err
					}
					if n, err := res.RowsAffected(); err != nil {
						return nil, err
					} else if n == 0 { // insNew met a stored id
						stored = append(stored, d)
						continue
					}
					if seq, err = res.LastInsertId(); err != nil {
						return nil, err
					}
				} else {
					var newHash *int64
					if textChanged {
						newHash = &d.hash
					}
					ch := old.changed
					if _, err := tx.ExecContext(ctx, fs.update(ch, newHash), updateArgs(d.raw, newHash, vals, ch, seq)...); err != nil {
						return nil, err
					}
					if textChanged {
						if _, err := tx.ExecContext(ctx, ftsDel, seq); err != nil {
							return nil, err
						}
					}
				}
				if textChanged {
					if _, err := tx.ExecContext(ctx, ftsIns, seq, d.text); err != nil {
						return nil, err
					}
				}
				changes = append(changes, tableChange{seq: seq, id: d.id, facets: d.facets})
			}
			return stored, nil
		}
		for rest := prepared; len(rest) > 0; {
			page := rest[:min(len(rest), upsertPage)]
			rest = rest[len(page):]
			stored, err := writePage(page, !insertFirst)
			if err == nil && len(stored) > 0 {
				_, err = writePage(stored, true)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}, func() []tableChange { return changes })
	if err != nil {
		return sqlErr("upsert "+c.name, err)
	}
	c.maybeAnalyze(ctx, len(prepared))
	return nil
}

// upsertDoc is a parsed document with what its write needs: its facet objects (flatFacets)
// as JSON for the file table and as JSONB for the columns, its full text and the text's hash.
type upsertDoc struct {
	parsedDoc
	facets map[string][]byte
	blobs  []any // facets as JSONB, one per declared column (facetBlobs), then the sort keys
	text   string
	hash   int64
}

// prepareUpserts computes the documents' facets, sort keys (of keyed) and text for spec, on
// every core for a large batch.
func prepareUpserts(docs []parsedDoc, spec facetSpec, keyed []string) ([]upsertDoc, error) {
	out := make([]upsertDoc, len(docs))
	errs := make([]error, len(docs))
	inParallel(len(docs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i], errs[i] = prepareParsed(docs[i], spec, keyed)
		}
	})
	if err := firstError(errs); err != nil {
		return nil, err
	}
	return out, nil
}

// firstError is the first error of errs that is not nil, in order.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// prepareParsed computes a parsed document's facets, sort keys (of keyed) and text for spec.
func prepareParsed(p parsedDoc, spec facetSpec, keyed []string) (upsertDoc, error) {
	d := upsertDoc{parsedDoc: p}
	var keys []any
	d.facets, keys = flatFacetsKeyed(d.value, spec, keyed)
	var err error
	if d.blobs, err = facetBlobs(d.facets, spec.declared()); err != nil {
		return upsertDoc{}, fmt.Errorf("document %s: %w", p.id, err)
	}
	d.blobs = append(d.blobs, keys...)
	d.text = searchText(d.value)
	d.hash = textHash(d.text)
	return d, nil
}

// maybeAnalyze refreshes the planner statistics each time the collection has taken as many
// writes as it had rows at the last refresh, so the planner knows which filter index is the
// selective one. (ANALYZE reads every index: about 0.2 s for 100k documents; doubling the
// interval keeps its total cost proportional to the writes.) The writes are committed
// already, so a failure here is not reported; the next write tries again. Called with
// ix.writeMu held.
func (c *embeddedCollection) maybeAnalyze(ctx context.Context, n int) {
	c.written += int64(n)
	if c.written < max(c.analyzedRows, analyzeMinWrites) {
		return
	}
	c.analyze(ctx)
}

// analyze refreshes the planner statistics now; called with ix.writeMu held. During a first
// load it analyzes the id index alone, which gives the planner the table's size: the indexes
// the load keeps (indexDefs) are analyzed once, at its end, where reading all of them at every
// doubling made a 1M-file load 28% more CPU.
func (c *embeddedCollection) analyze(ctx context.Context) {
	target := c.name + "_docs"
	if c.loading.Load() {
		target = `"` + idIndex(c.name) + `"`
	}
	if _, err := c.ix.writer.ExecContext(ctx, "ANALYZE "+target); err != nil {
		return
	}
	c.analyzed(ctx)
}

// analyzed records a refresh of the statistics: maybeAnalyze counts writes from here, against
// the table's size now.
func (c *embeddedCollection) analyzed(ctx context.Context) {
	var rows int64
	if err := c.ix.writer.QueryRowContext(ctx, "SELECT count(*) FROM "+c.name+"_docs").Scan(&rows); err != nil {
		return
	}
	c.written, c.analyzedRows = 0, rows
}

// idIndex names the index SQLite made for the docs table's UNIQUE id, its first constraint.
func idIndex(collection string) string { return "sqlite_autoindex_" + collection + "_docs_1" }

// inTx runs fn in a write transaction on the writer connection, which also increments the
// index generation; once committed, the documents changes() names (as fn left them) are
// applied to the in-memory file table.
func (c *embeddedCollection) inTx(ctx context.Context, fn func(tx writeTx) error, changes func() []tableChange) error {
	// Short statements (sqlitedb.Tx): a cancellation ends the transaction at the next one.
	tx, err := sqlitedb.Begin(ctx, c.ix.writer, "BEGIN IMMEDIATE")
	if err != nil {
		return err
	}
	defer tx.Rollback() // after a panic too; nothing once committed
	if err := fn(tx); err != nil {
		return err
	}
	gen, err := bumpGen(ctx, tx)
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		c.ix.table.invalidate() // committed or not: the table cannot tell
		return err
	}
	c.ix.table.apply(gen, c.name == filesCollection, changes(), c.settings.spec().declared())
	return nil
}

// deleted lists seqs as deletions for the file table.
func deleted(seqs []int64) []tableChange {
	out := make([]tableChange, len(seqs))
	for i, s := range seqs {
		out[i] = tableChange{seq: s}
	}
	return out
}

// deleteSeqs removes documents and their text by rowid.
func (c *embeddedCollection) deleteSeqs(ctx context.Context, tx writeTx, seqs []int64) error {
	del, ftsDel := `DELETE FROM `+c.name+`_docs WHERE seq = ?`, `DELETE FROM `+c.name+`_fts WHERE rowid = ?`
	for _, seq := range seqs {
		if _, err := tx.ExecContext(ctx, del, seq); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, ftsDel, seq); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes documents by id in one transaction.
func (c *embeddedCollection) Delete(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	c.ix.writeMu.Lock()
	defer c.ix.writeMu.Unlock()
	var seqs []int64
	err := c.inTx(ctx, func(tx writeTx) error {
		sel := `SELECT seq FROM ` + c.name + `_docs WHERE id = ?`
		seqs = seqs[:0]
		for _, id := range ids {
			var seq int64
			switch err := tx.QueryRowContext(ctx, sel, id).Scan(&seq); {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return err
			default:
				seqs = append(seqs, seq)
			}
		}
		return c.deleteSeqs(ctx, tx, seqs)
	}, func() []tableChange { return deleted(seqs) })
	if err != nil {
		return sqlErr("delete from "+c.name, err)
	}
	return nil
}

// DeleteByFilter removes the matching documents in one transaction.
func (c *embeddedCollection) DeleteByFilter(ctx context.Context, filter string) error {
	c.ix.writeMu.Lock()
	defer c.ix.writeMu.Unlock()
	where, args, err := compileWhere(filter, c.settings)
	if err != nil {
		return fmt.Errorf("delete from %s by filter: %w", c.name, err)
	}
	if where == "" {
		return fmt.Errorf("delete from %s by filter: %w: empty filter", c.name, ErrInvalidFilter)
	}
	var seqs []int64
	err = c.inTx(ctx, func(tx writeTx) error {
		rows, err := tx.QueryContext(ctx, `SELECT d.seq FROM `+c.name+`_docs d WHERE `+where, args...)
		if err != nil {
			return err
		}
		seqs = seqs[:0]
		for rows.Next() {
			var seq int64
			if err := rows.Scan(&seq); err != nil {
				rows.Close()
				return err
			}
			seqs = append(seqs, seq)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		return c.deleteSeqs(ctx, tx, seqs)
	}, func() []tableChange { return deleted(seqs) })
	if err != nil {
		return sqlErr("delete from "+c.name+" by filter", err)
	}
	return nil
}

// compileWhere parses and compiles a filter over the filterable attributes of s. A blank
// filter gives "".
func compileWhere(filter string, s Settings) (string, []any, error) {
	n, err := parseFilter(filter)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrInvalidFilter, err)
	}
	if n == nil {
		return "", nil, nil
	}
	where, args, err := compileFilter(n, s.Filterable, s.spec().declared())
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrInvalidFilter, err)
	}
	return where, args, nil
}

// Search runs a query in one read transaction, so hits and total agree.
//
// It counts first (exactly, driven by the filter indexes), then picks how to read the page: a
// text query is driven by the FTS index; a filter matching fewer than broadMatch documents is read through the filter indexes and sorted; a broader one walks
// the sort index (or the table, unsorted) and stops after the page, which takes a few rows
// per hit. SQLite's planner cannot tell these cases apart from its statistics, so the count
// decides.
func (c *embeddedCollection) Search(ctx context.Context, q Query) (Result, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	settings := c.settings
	where, args, err := compileWhere(q.Filter, settings)
	if err != nil {
		return Result{}, fmt.Errorf("search %s: %w", c.name, err)
	}
	keys, err := parseSort(q.Sort, settings.Sortable)
	if err != nil {
		return Result{}, fmt.Errorf("search %s: %w: %w", c.name, ErrInvalidFilter, err)
	}
	docs, fts := c.name+"_docs", c.name+"_fts"
	var conds []string
	match := ftsQuery(q.Q)
	if match != "" {
		conds = append(conds, fts+" MATCH ?")
		args = append([]any{match}, args...)
	}
	if where != "" {
		conds = append(conds, where)
	}
	whereSQL := ""
	if len(conds) > 0 {
		whereSQL = " WHERE " + strings.Join(conds, " AND ")
	}

	tx, err := c.ix.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Result{}, sqlErr("search "+c.name, err)
	}
	defer tx.Rollback()

	res := Result{Hits: []json.RawMessage{}}
	from := docs + " AS d"
	if match != "" {
		// CROSS JOIN fixes the join order: the text match drives, never a per-row MATCH.
		from = fts + " CROSS JOIN " + docs + " AS d ON d.seq = " + fts + ".rowid"
	}
	err = tx.QueryRowContext(ctx, "SELECT count(*) FROM "+from+whereSQL, args...).Scan(&res.Total)
	if err != nil {
		return Result{}, sqlErr("search "+c.name, err)
	}
	limit, offset := pageBounds(q)
	if res.Total <= int64(offset) {
		return res, nil
	}

	broad := match == "" && res.Total >= broadMatch
	sortWalk := broad && len(keys) > 0 && slices.Contains(settings.Sortable, keys[0].attr) && c.sortIndexed(keys[0].attr)
	declared := settings.spec().declared()
	var order []string
	for _, k := range keys {
		order = append(order, k.orderTerms(!sortWalk, declared, c.keyedSorts(settings))...)
	}
	switch {
	case match != "":
		order = append(order, "bm25("+fts+")")
	case broad && len(keys) == 0:
		from = docs + " AS d NOT INDEXED" // rowid order
	}
	order = append(order, "d.seq")
	query, queryArgs := "SELECT d.doc FROM "+from+whereSQL+" ORDER BY "+strings.Join(order, ", ")+" LIMIT ? OFFSET ?", append(args, limit, offset)
	if sortWalk { // keys[0], keyed, has one order term
		query, queryArgs = c.walkQuery([]string{"d.doc"}, keys[0], order[1:], whereSQL, args, limit, offset)
	}
	rows, err := tx.QueryContext(ctx, query, queryArgs...)
	if err != nil {
		return Result{}, sqlErr("search "+c.name, err)
	}
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			rows.Close()
			return Result{}, sqlErr("search "+c.name, err)
		}
		res.Hits = append(res.Hits, json.RawMessage(doc))
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return Result{}, sqlErr("search "+c.name, err)
	}
	exactHits(res.Hits)
	return res, nil
}

// ftsQuery turns a user query into an FTS5 query: every word must match, the last one as a
// prefix unless the query ends with a space (Meilisearch's rule). Words are split like the
// unicode61 tokenizer does and quoted, so no FTS5 syntax reaches the engine.
func ftsQuery(q string) string {
	words := strings.FieldsFunc(q, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) || unicode.In(r, unicode.Co))
	})
	if len(words) == 0 {
		return ""
	}
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	if r := []rune(q); !unicode.IsSpace(r[len(r)-1]) {
		words[len(words)-1] += "*"
	}
	return strings.Join(words, " ")
}

// Count returns the number of documents.
func (c *embeddedCollection) Count(ctx context.Context) (int64, error) {
	var n int64
	if err := c.ix.reader.QueryRowContext(ctx, `SELECT count(*) FROM `+c.name+`_docs`).Scan(&n); err != nil {
		return 0, sqlErr("count "+c.name, err)
	}
	return n, nil
}

// IDs walks ids in rowid order, one page at a time, holding no transaction while fn runs.
func (c *embeddedCollection) IDs(ctx context.Context, fn func(id string) error) error {
	const page = 1000
	last := int64(-1 << 63)
	for {
		rows, err := c.ix.reader.QueryContext(ctx, `SELECT seq, id FROM `+c.name+`_docs WHERE seq > ? ORDER BY seq LIMIT ?`, last, page)
		if err != nil {
			return sqlErr("list "+c.name+" ids", err)
		}
		ids := make([]string, 0, page)
		for rows.Next() {
			var id string
			if err := rows.Scan(&last, &id); err != nil {
				rows.Close()
				return sqlErr("list "+c.name+" ids", err)
			}
			ids = append(ids, id)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return sqlErr("list "+c.name+" ids", err)
		}
		for _, id := range ids {
			if err := fn(id); err != nil {
				return err
			}
		}
		if len(ids) < page {
			return nil
		}
	}
}

// upsertPage is how many documents Upsert looks up with one query.
const upsertPage = 500

// storedRow is a stored document's rowid, text hash, and which of its facet columns (in
// column order) differ from the document being written.
type storedRow struct {
	seq      int64
	textHash sql.NullInt64
	changed  []bool
}

// storedFacets reads the stored rows of docs that exist, by id, in one query, and compares
// their facet columns (JSONB) with each doc's new values (its blobs): as they are read, so the
// columns are not copied out of SQLite. Sort key columns follow their facet columns
// (changedColumns).
func storedFacets(ctx context.Context, tx writeTx, fs *facetSQL, docs []upsertDoc) (map[string]storedRow, error) {
	ids := make([]string, len(docs))
	at := make(map[string]int, len(docs))
	for i, d := range docs {
		ids[i] = d.id
		at[d.id] = i
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, fs.selMany, string(list))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]storedRow, len(docs))
	var seq int64
	var textHash sql.NullInt64
	var id string
	cols := make([]sql.RawBytes, len(fs.columns)-len(fs.keyOf))
	dest := make([]any, 0, len(cols)+3)
	dest = append(dest, &seq, &textHash)
	for i := range cols {
		dest = append(dest, &cols[i])
	}
	dest = append(dest, &id)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if i, ok := at[id]; ok {
			out[id] = storedRow{seq: seq, textHash: textHash, changed: fs.changedColumns(cols, docs[i].blobs)}
		}
	}
	return out, rows.Err()
}

// lastOfEach keeps the last document of each id, in order: a document upserted twice in one
// call ends as its last version, as it would one upsert after the other.
func lastOfEach(docs []upsertDoc) []upsertDoc {
	last := make(map[string]int, len(docs))
	for i, d := range docs {
		last[d.id] = i
	}
	if len(last) == len(docs) {
		return docs
	}
	out := make([]upsertDoc, 0, len(last))
	for i, d := range docs {
		if last[d.id] == i {
			out = append(out, d)
		}
	}
	return out
}
