package search

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Sort key columns. Each sortable attribute with a sort index (keyedSorts) has two BLOB
// columns beside its facet column, "s<:attr" and "s>:attr", holding its ascending and
// descending sort keys encoded so that SQLite's plain byte comparison of BLOBs gives the
// whole order sortKey.orderTerms defines: numbers first, then strings, missing values last,
// in both directions. A sort index is then one column, built at the end of a first load by
// comparing bytes, where an expression index evaluated json_extract on every comparison
// input and compared three terms (missing, type, value); the keys are computed in Go
// beside the facets, on every core.
//
// A key is one type byte, then the value:
//
//	0x01 number: the float64's bits made order-preserving (sign flipped, negatives inverted),
//	     big-endian; inverted for the descending key
//	0x02 string: its bytes; for the descending key, escaped (0x00 as 0x00 0xFF), ended by
//	     0x00 0x01 so that no key is a prefix of another, then inverted
//	0x03 missing (no value)
const (
	sortKeyNumber  = 0x01
	sortKeyString  = 0x02
	sortKeyMissing = 0x03
)

// sortColumn is the quoted name of attr's sort key column, kind '<' (ascending) or '>'.
func sortColumn(kind byte, attr string) string { return `"s` + string(kind) + `:` + attr + `"` }

// appendSortKey appends the ascending or descending sort key of a path's values (sorted, as
// flatFacets leaves them): its single value, else facetSortKey's; f nil or empty: missing.
func appendSortKey(b []byte, f *facet, desc bool) []byte {
	if f == nil || len(f.nums)+len(f.strs) == 0 {
		return append(b, sortKeyMissing)
	}
	num, str, isNum := facetSortKey(f, desc)
	if isNum {
		return appendNumberKey(b, num, desc)
	}
	return appendStringKey(b, str, desc)
}

func appendNumberKey(b []byte, x float64, desc bool) []byte {
	if x == 0 {
		x = 0 // -0 sorts as 0, as SQLite compares them
	}
	u := math.Float64bits(x)
	if u>>63 == 1 {
		u = ^u
	} else {
		u |= 1 << 63
	}
	if desc {
		u = ^u
	}
	return binary.BigEndian.AppendUint64(append(b, sortKeyNumber), u)
}

func appendStringKey(b []byte, s string, desc bool) []byte {
	b = append(b, sortKeyString)
	if !desc {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			b = append(b, 0xFF, 0x00)
		} else {
			b = append(b, ^s[i])
		}
	}
	return append(b, 0xFF, 0xFE)
}

// sortKeyValues returns, for each keyed attribute in order, its ascending and descending keys
// (from the walker w, after flatFacets' walk), ready to bind: slices of one new buffer.
func (w *facetWalker) sortKeyValues(keyed []string) []any {
	if len(keyed) == 0 {
		return nil
	}
	var endsArr [8]int
	ends := endsArr[:0] // on the stack for up to four keyed attributes
	buf := make([]byte, 0, 2*len(keyed)*10)
	for _, a := range keyed {
		f := w.facets[a]
		buf = appendSortKey(buf, f, false)
		ends = append(ends, len(buf))
		buf = appendSortKey(buf, f, true)
		ends = append(ends, len(buf))
	}
	out := make([]any, len(ends))
	start := 0
	for i, e := range ends {
		out[i] = buf[start:e:e]
		start = e
	}
	return out
}

// keyedSorts returns the sortable attributes of s that have sort key columns and sort
// indexes: in the files collection those of tableSorts, elsewhere all of them. (Whether the
// indexes exist now is sortIndexed: a first load builds them at its end.)
func (c *embeddedCollection) keyedSorts(s Settings) []string {
	if c.name != filesCollection {
		return s.Sortable
	}
	var out []string
	for _, a := range s.Sortable {
		if c.keyed(a) {
			out = append(out, a)
		}
	}
	return out
}

// keyed reports whether attr, a sortable attribute, has sort key columns (keyedSorts).
func (c *embeddedCollection) keyed(attr string) bool {
	return c.name != filesCollection || slices.Contains(tableSorts, attr)
}

// sortColumns returns the quoted names of the sort key columns of keyed, in the order of
// sortKeyValues.
func sortColumns(keyed []string) []string {
	out := make([]string, 0, 2*len(keyed))
	for _, a := range keyed {
		out = append(out, sortColumn('<', a), sortColumn('>', a))
	}
	return out
}

// walkQuery returns the query, and its arguments, of one page of rows (cols of the
// collection's documents, as d) in sort order, read by walking the sort index of k, the first
// sort key: rest are the order terms after k's (the later keys', then the tie-break), whereSQL
// (" WHERE …" or "") and args the conditions.
//
// A one-valued attribute (oneValued) has its ascending index alone. Its descending order is
// numbers from the largest, then strings from the last, then the documents without a value
// (sortkeys.go): within each type, the ascending keys read backwards, the first byte of a key
// being its type. So the page is read as three walks of that index, one per type, each
// stopped after offset+limit rows, and one sort of what they return by the descending key.
// A document with several values, which only a caller writing its own documents to the files
// collection gives (PrepareFile's are one-valued), sorts by its largest value descending and
// its smallest ascending: the walks leave those out, and a fourth reads them from their own
// small index (multiSortCond).
func (c *embeddedCollection) walkQuery(cols []string, k sortKey, rest []string, whereSQL string, args []any, limit, offset int) (string, []any) {
	index := func(name string) string { return " FROM " + c.name + "_docs AS d INDEXED BY " + name }
	if !k.desc || !c.oneValued(k.attr) {
		kind := byte('<')
		if k.desc {
			kind = '>'
		}
		order := append([]string{"d." + sortColumn(kind, k.attr)}, rest...)
		return "SELECT " + strings.Join(cols, ", ") + index(c.sortIndexName(k)) + whereSQL + " ORDER BY " + strings.Join(order, ", ") + " LIMIT ? OFFSET ?",
			append(slices.Clip(args), limit, offset)
	}
	asc, desc := "d."+sortColumn('<', k.attr), "d."+sortColumn('>', k.attr)
	where := " WHERE "
	if whereSQL != "" {
		where = " WHERE (" + strings.TrimPrefix(whereSQL, " WHERE ") + ") AND "
	}
	// Each walk's rows carry what the final sort reads: the descending key, and the values of
	// the later order terms.
	var sel, outCols, outOrder []string
	for i, col := range cols {
		sel = append(sel, fmt.Sprintf("%s AS w_c%d", col, i))
		outCols = append(outCols, fmt.Sprintf("w_c%d", i))
	}
	sel = append(sel, desc+" AS w_key")
	outOrder = append(outOrder, "w_key")
	for i, t := range rest {
		expr, isDesc := strings.CutSuffix(t, " DESC")
		sel = append(sel, fmt.Sprintf("%s AS w_o%d", expr, i))
		if isDesc {
			outOrder = append(outOrder, fmt.Sprintf("w_o%d DESC", i))
		} else {
			outOrder = append(outOrder, fmt.Sprintf("w_o%d", i))
		}
	}
	multi := multiSortCond(k.attr)
	one := "(" + multi + ") IS NOT 1 AND "
	ascIndex := index(c.sortIndexName(k))
	walks := []struct{ from, cond, order string }{
		{ascIndex, one + fmt.Sprintf("%s < x'%02x'", asc, sortKeyString), asc + " DESC"},
		{ascIndex, one + fmt.Sprintf("%s >= x'%02x' AND %s < x'%02x'", asc, sortKeyString, asc, sortKeyMissing), asc + " DESC"},
		{ascIndex, one + fmt.Sprintf("%s >= x'%02x'", asc, sortKeyMissing), ""}, // all the same key
		{index(c.indexName(sortMulti, k.attr)), multi, desc},
	}
	parts := make([]string, len(walks))
	var all []any
	for i, w := range walks {
		order := rest
		if w.order != "" {
			order = append([]string{w.order}, rest...)
		}
		parts[i] = fmt.Sprintf("SELECT * FROM (SELECT %s%s%s%s ORDER BY %s LIMIT ?)",
			strings.Join(sel, ", "), w.from, where, w.cond, strings.Join(order, ", "))
		all = append(append(all, args...), offset+limit)
	}
	return "SELECT " + strings.Join(outCols, ", ") + " FROM (" + strings.Join(parts, " UNION ALL ") + ") ORDER BY " +
			strings.Join(outOrder, ", ") + " LIMIT ? OFFSET ?",
		append(all, limit, offset)
}

// multiSortCond is the condition of a document with several values of attr, the one of the
// partial index (sortMulti) that lists them for a one-valued attribute by its descending key.
func multiSortCond(attr string) string {
	return fmt.Sprintf("json_extract(%s, %s) >= %d", facetColumn(attr), flatPath("f", attr), flagMulti)
}
