package search

import (
	"cmp"
	"math"
	"strconv"
	"strings"
)

// tableFilter compiles a filter to a test of a file (by rowid) on the file table, for the
// conditions the table can answer exactly as the SQL of filter_sql.go does: equality and IN
// on a facet the table holds, comparisons and ranges on the date. ok is false when some
// condition needs SQL (another attribute, EXISTS, IS NULL/EMPTY, STARTS WITH, a range on a
// facet, a number the table's text form cannot tell apart); the caller then filters by SQL.
// The test is only asked of files the table holds, so NOT is the plain complement, as
// Meilisearch's (and the SQL's two-valued NOT) is. Called with t.mu held for reading, and
// the test too.
func (t *fileTable) tableFilter(n filterNode) (test func(seq int64) bool, ok bool) {
	switch n := n.(type) {
	case *orNode, *andNode:
		var kids []filterNode
		or := false
		if o, isOr := n.(*orNode); isOr {
			kids, or = o.kids, true
		} else {
			kids = n.(*andNode).kids
		}
		tests := make([]func(int64) bool, len(kids))
		for i, k := range kids {
			if tests[i], ok = t.tableFilter(k); !ok {
				return nil, false
			}
		}
		return func(seq int64) bool {
			for _, test := range tests {
				if test(seq) == or {
					return or
				}
			}
			return !or
		}, true
	case *notNode:
		kid, ok := t.tableFilter(n.kid)
		if !ok {
			return nil, false
		}
		return func(seq int64) bool { return !kid(seq) }, true
	case *condNode:
		if n.attr == FieldDate && t.datesHeld {
			return t.dateTest(n)
		}
		if f := t.facets[n.attr]; f != nil && (n.op == opEq || n.op == opIn) {
			return f.valueTest(n.vals)
		}
	}
	return nil, false
}

// valueTest is equality with any of vals. The table holds values as facet counts write them
// (facetValue: numbers in decimal, strings normalized), so the number 2019 and the string
// "2019" are both "2019"; the SQL matches both for the literal 2019 too. A numeric literal
// whose decimal form differs from its text (2019.0, 1e3, -0) or that float64 cannot hold
// exactly would match a number the text does not name: SQL decides those.
func (f *memFacet) valueTest(vals []filterValue) (func(int64) bool, bool) {
	want := map[uint32]bool{}
	for _, v := range vals {
		if v.isNum && (v.num == 0 || math.Abs(v.num) >= 1<<53 || strconv.FormatFloat(v.num, 'f', -1, 64) != v.str) {
			return nil, false
		}
		if c, ok := f.dict[v.str]; ok && v.str != "" {
			want[c] = true
		}
	}
	return func(seq int64) bool {
		if seq < int64(len(f.one)) && want[f.one[seq]] {
			return true
		}
		for _, c := range f.many[seq] {
			if want[c] {
				return true
			}
		}
		return false
	}, true
}

// dateTest compares the date (a number on every dated file) as the SQL does: a number
// matches a numeric literal only, and a range only when both ends are numbers.
func (t *fileTable) dateTest(c *condNode) (func(int64) bool, bool) {
	in := func(lo, hi float64) func(int64) bool {
		return func(seq int64) bool { return t.dated[seq] && t.dates[seq] >= lo && t.dates[seq] <= hi }
	}
	none := func(int64) bool { return false }
	inf := math.Inf(1)
	switch c.op {
	case opEq, opIn:
		var nums []float64
		for _, v := range c.vals {
			if v.isNum {
				nums = append(nums, v.num)
			}
		}
		return func(seq int64) bool {
			if t.dated[seq] {
				for _, n := range nums {
					if t.dates[seq] == n {
						return true
					}
				}
			}
			return false
		}, true
	case opGt, opGe, opLt, opLe:
		v := c.vals[0]
		if !v.isNum {
			return none, true
		}
		switch c.op {
		case opGe:
			return in(v.num, inf), true
		case opLe:
			return in(-inf, v.num), true
		case opGt:
			return func(seq int64) bool { return t.dated[seq] && t.dates[seq] > v.num }, true
		default:
			return func(seq int64) bool { return t.dated[seq] && t.dates[seq] < v.num }, true
		}
	case opRange:
		if !c.vals[0].isNum || !c.vals[1].isNum {
			return none, true
		}
		return in(c.vals[0].num, c.vals[1].num), true
	}
	return nil, false
}

// tableSorted lists the sortable attributes whose sort keys the table holds, besides the
// date: a search sorted by one of them sorts its matches here rather than in SQL.
var tableSorted = []string{"size", FieldSortName}

// memSort holds one attribute's ascending ("<") and descending (">") sort keys per file.
type memSort struct{ asc, desc []sortValue }

// sortValue is a sort key as SQLite orders it: missing, then every number before every text.
type sortValue struct {
	kind int8 // 0 missing, 1 number, 2 text
	num  float64
	str  string
}

func newSortValue(v any) sortValue {
	switch x := v.(type) {
	case float64:
		return sortValue{kind: 1, num: x}
	case int64:
		return sortValue{kind: 1, num: float64(x)}
	case string:
		return sortValue{kind: 2, str: x}
	}
	return sortValue{}
}

// set records a file's keys.
func (m *memSort) set(seq int64, asc, desc sortValue) {
	growTo(&m.asc, seq)
	growTo(&m.desc, seq)
	m.asc[seq], m.desc[seq] = asc, desc
}

// compare orders files a and b as sortKey.orderTerms does: missing keys last, numbers before
// texts in both directions, then by value (desc: largest first); 0 on a tie (the caller then
// orders by id).
func (m *memSort) compare(a, b int64, desc bool) int {
	keys := m.asc
	if desc {
		keys = m.desc
	}
	var x, y sortValue
	if a < int64(len(keys)) {
		x = keys[a]
	}
	if b < int64(len(keys)) {
		y = keys[b]
	}
	if x.kind != y.kind {
		if x.kind == 0 || y.kind == 0 {
			return cmp.Compare(y.kind, x.kind) // missing last
		}
		return cmp.Compare(x.kind, y.kind) // numbers first
	}
	c := cmp.Compare(x.num, y.num)
	if x.kind == 2 {
		c = strings.Compare(x.str, y.str)
	}
	if desc {
		return -c
	}
	return c
}
