package search

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strings"
	"sync"
)

// fileTable keeps in memory what a search over many files reads per file: each file's id,
// date and facet values, and each chunk's file. With words, a search then reads only the FTS
// indexes (which rows match) and the page's own documents and chunks; the matching files'
// facet counts, total and relevance come from here, where reading thousands of rows (and a
// JSON extraction per value) took most of the time.
//
// The table is valid for one generation of the index: a counter in the settings table that
// every write transaction increments (bumpGen). Writes through this process update the table
// after their commit; a search uses it only when its own read transaction sees the same
// generation, and otherwise reads SQL as before (fileTable.usable). A table that fell behind
// (another process wrote, settings changed, a facet not held was asked for) is rebuilt in
// the background, holding the write lock so that no write is missed.
type fileTable struct {
	mu  sync.RWMutex
	gen int64 // generation reflected; -1: not built or invalid

	facets map[string]*memFacet // by attribute: the facets held
	ids    []string             // by file rowid: id ("": no document)
	dated  []bool               // by file rowid: has a date (FieldDate)
	dates  []float64
	// datesHeld: the date is declared sortable, so dated and dates hold it.
	datesHeld bool
	sorts     map[string]*memSort // by attribute: the sort keys held (tableSorted)
	// Every file id and chunk file_id has a code; chunks name their file by code, and fileOf
	// gives the code's file rowid (0: no such file), so a chunk's file costs no hashing.
	chunks []uint32 // by chunk rowid: code of its file_id (0: none)
	codes  map[string]uint32
	fileOf []int64 // by code

	// want lists the facets to hold at the next build; building is set while one runs.
	want     []string
	building bool
}

// memFacet holds one attribute's values per file, as codes into names.
type memFacet struct {
	dict  map[string]uint32
	names []string           // code → facet value; names[0] unused
	one   []uint32           // by file rowid: the single value (0: none)
	many  map[int64][]uint32 // files with several values
}

func newFileTable() *fileTable {
	return &fileTable{gen: -1, want: slices.Clone(DefaultFacets)}
}

func (f *memFacet) code(v string) uint32 {
	c, ok := f.dict[v]
	if !ok {
		c = uint32(len(f.names))
		f.dict[v] = c
		f.names = append(f.names, v)
	}
	return c
}

// set records a file's values (facetValue form).
func (f *memFacet) set(seq int64, vals []string) {
	growTo(&f.one, seq)
	f.one[seq] = 0
	delete(f.many, seq)
	switch len(vals) {
	case 0:
	case 1:
		f.one[seq] = f.code(vals[0])
	default:
		cs := make([]uint32, len(vals))
		for i, v := range vals {
			cs[i] = f.code(v)
		}
		f.many[seq] = cs
	}
}

// count counts the files of set by value.
func (f *memFacet) count(set []int64) []FacetCount {
	n := make([]int64, len(f.names))
	for _, s := range set {
		if s < int64(len(f.one)) {
			n[f.one[s]]++
		}
		if len(f.many) > 0 {
			for _, c := range f.many[s] {
				n[c]++
			}
		}
	}
	m := map[string]int64{}
	for c := 1; c < len(n); c++ {
		if n[c] > 0 {
			m[f.names[c]] += n[c]
		}
	}
	return facetCounts(m)
}

func growTo[T any](s *[]T, i int64) {
	if int64(len(*s)) <= i {
		*s = append(*s, make([]T, int(i)+1-len(*s))...)
	}
}

// usable reports whether the table reflects generation gen and holds every facet asked for.
// Called with t.mu held.
func (t *fileTable) usable(gen int64, facets []string) bool {
	if t.gen < 0 || t.gen != gen {
		return false
	}
	for _, f := range facets {
		if t.facets[f] == nil {
			return false
		}
	}
	return true
}

// chunkFile returns the rowid of the file a chunk belongs to, 0 when there is none.
func (t *fileTable) chunkFile(seq int64) int64 {
	if seq < 0 || seq >= int64(len(t.chunks)) {
		return 0
	}
	return t.fileOf[t.chunks[seq]]
}

func (t *fileTable) code(id string) uint32 {
	c, ok := t.codes[id]
	if !ok {
		c = uint32(len(t.fileOf))
		t.codes[id] = c
		t.fileOf = append(t.fileOf, 0)
	}
	return c
}

// tableChange is one document written (facets set) or deleted (facets nil) by a transaction.
type tableChange struct {
	seq    int64
	id     string
	facets map[string][]byte // flatFacets' objects by declared attribute
}

// apply records the changes of the transaction that made generation gen. A table that was not
// at gen-1 missed something and is invalidated.
func (t *fileTable) apply(gen int64, files bool, changes []tableChange, declared []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gen < 0 || t.gen != gen-1 {
		t.gen = -1
		return
	}
	t.gen = gen
	for _, ch := range changes {
		if !files {
			growTo(&t.chunks, ch.seq)
			t.chunks[ch.seq] = 0
			if ch.facets != nil {
				if vals := flatValues(ch.facets, "file_id", declared); len(vals) == 1 {
					t.chunks[ch.seq] = t.code(vals[0])
				}
			}
			continue
		}
		growTo(&t.ids, ch.seq)
		growTo(&t.dated, ch.seq)
		growTo(&t.dates, ch.seq)
		if old := t.ids[ch.seq]; old != "" && t.fileOf[t.code(old)] == ch.seq {
			t.fileOf[t.code(old)] = 0
		}
		t.ids[ch.seq], t.dated[ch.seq], t.dates[ch.seq] = "", false, 0
		for _, f := range t.facets {
			f.set(ch.seq, nil)
		}
		for _, m := range t.sorts {
			m.set(ch.seq, sortValue{}, sortValue{})
		}
		if ch.facets == nil {
			continue
		}
		t.ids[ch.seq] = ch.id
		t.fileOf[t.code(ch.id)] = ch.seq
		if d, ok := flatSortNumber(ch.facets, ">", FieldDate, declared); ok {
			t.dated[ch.seq], t.dates[ch.seq] = true, d
		}
		for a, f := range t.facets {
			f.set(ch.seq, flatValues(ch.facets, a, declared))
		}
		for a, m := range t.sorts {
			obj := flatObject(ch.facets, a, declared)
			key := func(kind string) sortValue {
				if raw, ok := sortKeyIn(obj, kind, a); ok {
					return newSortValue(jsonScalar(raw))
				}
				return sortValue{}
			}
			m.set(ch.seq, key("<"), key(">"))
		}
	}
}

// invalidate drops the table (settings changed).
func (t *fileTable) invalidate() {
	t.mu.Lock()
	t.gen = -1
	t.mu.Unlock()
}

// flatObject decodes the facet object holding attr's keys.
func flatObject(facets map[string][]byte, attr string, declared []string) map[string]json.RawMessage {
	raw, ok := facets[owner(attr, declared)]
	if !ok {
		return nil
	}
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(raw, &obj)
	return obj
}

// flatValues returns attr's facet values ("v:" or "m:" keys) as the facet counts write them.
func flatValues(facets map[string][]byte, attr string, declared []string) []string {
	obj := flatObject(facets, attr, declared)
	if v, ok := obj["v:"+attr]; ok {
		return []string{facetValue(jsonScalar(v))}
	}
	var list []json.RawMessage
	if json.Unmarshal(obj["m:"+attr], &list) != nil {
		return nil
	}
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = facetValue(jsonScalar(e))
	}
	return out
}

// sortKeyIn reads a sort key (kind "<" or ">") of attr from its facet object: its single
// value, else the key kept for several values (see sortKeyOf).
func sortKeyIn(obj map[string]json.RawMessage, kind, attr string) (json.RawMessage, bool) {
	if raw, ok := obj["v:"+attr]; ok {
		return raw, true
	}
	raw, ok := obj[kind+":"+attr]
	return raw, ok
}

// flatSortNumber reads a numeric sort key (kind "<" or ">") of attr.
func flatSortNumber(facets map[string][]byte, kind, attr string, declared []string) (float64, bool) {
	var n float64
	raw, ok := sortKeyIn(flatObject(facets, attr, declared), kind, attr)
	return n, ok && json.Unmarshal(raw, &n) == nil
}

// writeTx is what the index's writes run their statements on: a sqlitedb.Tx for documents, a
// sql.Tx for settings and rebuilds, which may run long and must stay interruptible.
type writeTx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// bumpGen increments the index generation in a write transaction and returns the new one.
func bumpGen(ctx context.Context, tx writeTx) (int64, error) {
	var gen int64
	err := tx.QueryRowContext(ctx, `UPDATE settings SET value = CAST(value AS INTEGER) + 1 WHERE collection = ?
		RETURNING CAST(value AS INTEGER)`, genKey).Scan(&gen)
	return gen, err
}

// genKey is the settings row holding the generation (collections are named [a-z]+).
const genKey = "#generation"

// readGen reads the generation a read transaction sees.
func readGen(ctx context.Context, tx *sql.Tx) (int64, error) {
	var gen int64
	err := tx.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM settings WHERE collection = ?`, genKey).Scan(&gen)
	return gen, err
}

// requestBuild starts a background build of the table with the facets asked for, unless one
// is running.
func (ix *embeddedIndex) requestBuild(facets []string) {
	t := ix.table
	t.mu.Lock()
	for _, f := range facets {
		if !slices.Contains(t.want, f) {
			t.want = append(t.want, f)
		}
	}
	if t.building || ix.closed {
		t.mu.Unlock()
		return
	}
	t.building = true
	want := slices.Clone(t.want)
	t.mu.Unlock()
	ix.bg.Add(1)
	go func() {
		defer ix.bg.Done()
		err := ix.buildTable(ix.bgCtx, want)
		t.mu.Lock()
		t.building = false
		t.mu.Unlock()
		_ = err // the next search asks again
	}()
}

// buildTable reads the table from the database while no write can happen.
func (ix *embeddedIndex) buildTable(ctx context.Context, want []string) error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	ix.files.mu.RLock()
	settings := ix.files.settings
	ix.files.mu.RUnlock()
	ix.chunks.mu.RLock()
	withChunks := slices.Contains(ix.chunks.settings.Filterable, "file_id")
	ix.chunks.mu.RUnlock()
	declared := settings.spec().declared()
	want = slices.DeleteFunc(slices.Clone(want), func(f string) bool { return !covered(f, settings.Filterable) })
	tx, err := ix.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	gen, err := readGen(ctx, tx)
	if err != nil {
		return err
	}
	nt := &fileTable{gen: gen, facets: map[string]*memFacet{}, codes: map[string]uint32{}, fileOf: []int64{0}, sorts: map[string]*memSort{}}
	for _, f := range want {
		nt.facets[f] = &memFacet{dict: map[string]uint32{}, names: []string{""}, many: map[int64][]uint32{}}
	}
	cols := []string{"d.seq", "d.id", "NULL"}
	if owner(FieldDate, declared) != "" && covered(FieldDate, settings.Sortable) {
		cols[2] = sortExpr(">", FieldDate, declared)
		nt.datesHeld = true
	}
	for _, f := range want {
		cols = append(cols, flatExpr("v", f, declared), flatExpr("m", f, declared))
	}
	err = scanFacetRows(ctx, tx, cols, "", nil, want, func(seq int64, id string, date sql.NullFloat64, vals [][]string) {
		growTo(&nt.ids, seq)
		growTo(&nt.dated, seq)
		growTo(&nt.dates, seq)
		nt.ids[seq], nt.dated[seq], nt.dates[seq] = id, date.Valid, date.Float64
		nt.fileOf[nt.code(id)] = seq
		for i, f := range want {
			nt.facets[f].set(seq, vals[i])
		}
	})
	if err != nil {
		return err
	}
	if withChunks {
		rows, err := tx.QueryContext(ctx, `SELECT seq, `+chunkFileID("k")+` FROM chunks_docs AS k`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var seq int64
			var id sql.NullString
			if err := rows.Scan(&seq, &id); err != nil {
				return err
			}
			if id.Valid {
				growTo(&nt.chunks, seq)
				nt.chunks[seq] = nt.code(id.String)
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
	}
	for _, a := range tableSorted {
		if owner(a, declared) == "" || !covered(a, settings.Sortable) {
			continue
		}
		m := &memSort{}
		nt.sorts[a] = m
		rows, err := tx.QueryContext(ctx, "SELECT d.seq, "+sortExpr("<", a, declared)+", "+sortExpr(">", a, declared)+" FROM files_docs AS d")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var seq int64
			var asc, desc any
			if err := rows.Scan(&seq, &asc, &desc); err != nil {
				return err
			}
			m.set(seq, newSortValue(asc), newSortValue(desc))
		}
		if err := rows.Err(); err != nil {
			return err
		}
	}
	t := ix.table
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sorts = nt.sorts
	t.gen, t.facets, t.ids, t.dated, t.dates, t.datesHeld = nt.gen, nt.facets, nt.ids, nt.dated, nt.dates, nt.datesHeld
	t.chunks, t.codes, t.fileOf = nt.chunks, nt.codes, nt.fileOf
	return nil
}

// scanFacetRows runs SELECT cols (seq, id, date, then a "v" and an "m" expression per facet)
// FROM files_docs AS d whereSQL and hands each row's values (facetValue form) to fn.
func scanFacetRows(ctx context.Context, tx *sql.Tx, cols []string, whereSQL string, args []any, facets []string,
	fn func(seq int64, id string, date sql.NullFloat64, vals [][]string)) error {
	rows, err := tx.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM files_docs AS d"+whereSQL, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	raw := make([]any, 2*len(facets))
	var seq int64
	var id string
	var date sql.NullFloat64
	dest := []any{&seq, &id, &date}
	for i := range raw {
		dest = append(dest, &raw[i])
	}
	vals := make([][]string, len(facets))
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		for i := range facets {
			vals[i] = vals[i][:0]
			if v := raw[2*i]; v != nil {
				vals[i] = append(vals[i], facetValue(v))
			}
			if m, ok := raw[2*i+1].(string); ok {
				var list []json.RawMessage
				if json.Unmarshal([]byte(m), &list) == nil {
					for _, e := range list {
						vals[i] = append(vals[i], facetValue(jsonScalar(e)))
					}
				}
			}
		}
		fn(seq, id, date, vals)
	}
	return rows.Err()
}
