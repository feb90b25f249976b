package search

import (
	"bytes"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// facetSQL builds the statements that read and write a collection's facet columns (one per
// declared attribute, see facets.go) and sort key columns (two per keyed attribute, see
// sortkeys.go) for one set of settings.
type facetSQL struct {
	table string // <collection>_docs
	// columns are the quoted names of the facet columns (declared's order), then of the sort
	// key columns (sortColumns' order): the values a document's write binds (upsertDoc.blobs).
	columns []string
	// keyOf gives, for each sort key column (columns[len(columns)-len(keyOf)+j]), the index of
	// its attribute's facet column: the keys derive from that column's values alone, so they
	// change only with it, and selMany does not read them.
	keyOf []int
	ins   string
	// insNew inserts a row unless its id is stored (a first load's insert-first, see Upsert).
	insNew string
	// selMany reads seq, text_hash, the facet columns and id of the rows whose ids a JSON
	// array lists.
	selMany string
	upd     map[string]string // UPDATE statements by changed-column mask
}

func newFacetSQL(table string, declared, keyed []string) *facetSQL {
	f := &facetSQL{table: table, upd: map[string]string{}}
	for _, a := range declared {
		f.columns = append(f.columns, facetColumn(a))
	}
	f.columns = append(f.columns, sortColumns(keyed)...)
	for _, a := range keyed {
		i := slices.Index(declared, a) // a sortable attribute is declared
		f.keyOf = append(f.keyOf, i, i)
	}
	var sel, cols, ph strings.Builder
	sel.WriteString("SELECT seq, text_hash")
	for i, c := range f.columns {
		// The stored facets are compared with the new ones (facetBlobs), so an unchanged
		// column is left alone (changedColumns).
		if i < len(declared) {
			sel.WriteString(", " + c)
		}
		cols.WriteString(", " + c)
		ph.WriteString(", ?")
	}
	f.selMany = sel.String() + ", id FROM " + table + " WHERE id IN (SELECT value FROM json_each(?))"
	f.ins = "INSERT INTO " + table + "(id, doc, text_hash" + cols.String() + ") VALUES (?, ?, ?" + ph.String() + ")"
	f.insNew = f.ins + " ON CONFLICT(id) DO NOTHING"
	return f
}

// changed reports which columns differ between the stored objects (nil: NULL) and vals.
func changed(stored []sql.RawBytes, vals []any) []bool {
	out := make([]bool, len(vals))
	for i, v := range vals {
		b, _ := v.([]byte)
		out[i] = (stored[i] == nil) != (b == nil) || !bytes.Equal(stored[i], b)
	}
	return out
}

// changedColumns reports which of the columns a write changes, from the stored facet columns
// (as selMany read them) and the new values: a facet column when it differs, a sort key column
// when its attribute's facet column does.
func (f *facetSQL) changedColumns(stored []sql.RawBytes, vals []any) []bool {
	nFacets := len(f.columns) - len(f.keyOf)
	out := changed(stored, vals[:nFacets])
	for _, i := range f.keyOf {
		out = append(out, out[i])
	}
	return out
}

// update returns "UPDATE ... SET doc = ?[, text_hash = ?], <changed columns> = ? ...
// WHERE seq = ?", text_hash when newHash is set (the full text changed). SQLite maintains an
// expression index only when the UPDATE assigns a column it reads, so leaving unchanged
// columns out spares their indexes.
func (f *facetSQL) update(changed []bool, newHash *int64) string {
	mask := make([]byte, len(changed), len(changed)+1)
	for i, c := range changed {
		mask[i] = '0'
		if c {
			mask[i] = '1'
		}
	}
	if newHash != nil {
		mask = append(mask, 't')
	}
	if s, ok := f.upd[string(mask)]; ok {
		return s
	}
	var b strings.Builder
	b.WriteString("UPDATE " + f.table + " SET doc = ?")
	if newHash != nil {
		b.WriteString(", text_hash = ?")
	}
	for i, c := range changed {
		if c {
			b.WriteString(", " + f.columns[i] + " = ?")
		}
	}
	b.WriteString(" WHERE seq = ?")
	f.upd[string(mask)] = b.String()
	return b.String()
}

// updateArgs returns the arguments of update(changed, newHash): doc, *newHash if set, the
// changed values, seq.
func updateArgs(doc any, newHash *int64, vals []any, changed []bool, seq int64) []any {
	args := []any{doc}
	if newHash != nil {
		args = append(args, *newHash)
	}
	for i, c := range changed {
		if c {
			args = append(args, vals[i])
		}
	}
	return append(args, seq)
}

// facetBlobs encodes the facet objects flatFacets wrote as JSONB, the columns' form, in one
// buffer: one value per declared column, in order, ready to bind (nil: the column is NULL).
func facetBlobs(facets map[string][]byte, declared []string) ([]any, error) {
	vals := make([]any, len(declared))
	if len(facets) == 0 {
		return vals, nil
	}
	n := 0
	for _, obj := range facets {
		n += len(obj) + 8
	}
	buf := make([]byte, 0, n)
	for i, a := range declared {
		obj, ok := facets[a]
		if !ok {
			continue
		}
		start := len(buf)
		var err error
		if buf, err = appendJSONB(buf, obj); err != nil {
			return nil, fmt.Errorf("facet %s: %w", a, err)
		}
		vals[i] = buf[start:len(buf):len(buf)]
	}
	return vals, nil
}
