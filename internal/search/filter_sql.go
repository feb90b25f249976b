package search

import (
	"fmt"
	"slices"
	"strings"
)

// This file compiles a filter AST and sort clauses to SQL over the facet columns of the
// embedded backend (see facets.go). Values are always bound parameters; attribute names,
// restricted to [A-Za-z0-9_.-] by the parser, are the only text placed in the SQL, inside JSON
// path literals, where they must be literal for expression indexes to apply.

// flatPath returns the SQL literal of the JSON path of a flat key, e.g. '$."v:size"'.
func flatPath(kind, attr string) string {
	return `'$."` + kind + ":" + attr + `"'`
}

// flatExpr returns the SQL expression reading a facet key of path in the row aliased d, from
// the column of the declared attribute owning path.
func flatExpr(kind, path string, declared []string) string {
	return "json_extract(d." + facetColumn(owner(path, declared)) + ", " + flatPath(kind, path) + ")"
}

// sortKeyOf is the expression of a sort key from its two readers: the path's single value,
// else the key flatFacets keeps for a path with several. The value comes first because
// nearly every document has one: a miss costs a second lookup.
func sortKeyOf(value, several string) string {
	return "coalesce(" + value + ", " + several + ")"
}

// sortExpr reads a sort key of path ("<" ascending, ">" descending) in the row aliased d.
func sortExpr(kind, path string, declared []string) string {
	return sortKeyOf(flatExpr("v", path, declared), flatExpr(kind, path, declared))
}

type sqlWhere struct {
	b        strings.Builder
	args     []any
	declared []string // filterable and sortable attributes: the facet columns
}

// compileFilter turns a filter into a SQL boolean expression over the row alias d. filterable
// lists the declared filterable attributes, declared every attribute with a facet column.
func compileFilter(n filterNode, filterable, declared []string) (string, []any, error) {
	w := &sqlWhere{declared: declared}
	if err := w.node(n, filterable); err != nil {
		return "", nil, err
	}
	return w.b.String(), w.args, nil
}

func (w *sqlWhere) node(n filterNode, filterable []string) error {
	switch n := n.(type) {
	case *orNode:
		return w.join(n.kids, " OR ", filterable)
	case *andNode:
		return w.join(n.kids, " AND ", filterable)
	case *notNode:
		// SQL's three-valued logic would drop rows where the inner test is NULL (a missing
		// attribute); Meilisearch's NOT is the exact complement, so force two values here.
		w.b.WriteString("NOT coalesce(")
		if err := w.node(n.kid, filterable); err != nil {
			return err
		}
		w.b.WriteString(", 0)")
		return nil
	case *condNode:
		if !covered(n.attr, filterable) {
			return notAllowedError("filterable", n.attr, filterable)
		}
		w.cond(n)
		return nil
	}
	return fmt.Errorf("unknown filter node %T", n)
}

func (w *sqlWhere) join(kids []filterNode, sep string, filterable []string) error {
	w.b.WriteByte('(')
	for i, k := range kids {
		if i > 0 {
			w.b.WriteString(sep)
		}
		if err := w.node(k, filterable); err != nil {
			return err
		}
	}
	w.b.WriteByte(')')
	return nil
}

func notAllowedError(what, attr string, allowed []string) error {
	list := "none"
	if len(allowed) > 0 {
		list = "`" + strings.Join(allowed, "`, `") + "`"
	}
	return fmt.Errorf("attribute `%s` is not %s; %s attributes: %s", attr, what, what, list)
}

// cond writes one condition. In a positive context a NULL result (attribute missing) acts as
// false, which is what Meilisearch does; NOT above it is made two-valued by node.
func (w *sqlWhere) cond(c *condNode) {
	flags := flatExpr("f", c.attr, w.declared)
	switch c.op {
	case opExists:
		// A path with one value and no other flag has no flags key (flatFacets).
		fmt.Fprintf(&w.b, "(%s IS NOT NULL OR %s IS NOT NULL)", flags, flatExpr("v", c.attr, w.declared))
		return
	case opIsNull:
		fmt.Fprintf(&w.b, "(%s & %d) != 0", flags, flagNull)
		return
	case opIsEmpty:
		fmt.Fprintf(&w.b, "(%s & %d) != 0", flags, flagEmpty)
		return
	}
	// A value test: on the single value, or on any element of the multi-value array.
	w.b.WriteByte('(')
	w.valueTest(c, flatExpr("v", c.attr, w.declared))
	fmt.Fprintf(&w.b, " OR (%s >= %d AND EXISTS (SELECT 1 FROM json_each(d.%s, %s) WHERE ",
		flags, flagMulti, facetColumn(owner(c.attr, w.declared)), flatPath("m", c.attr))
	w.valueTest(c, "value")
	w.b.WriteString(")))")
}

// valueTest writes the test of one value x (a number or a normalized string, never NULL in a
// match). SQLite orders every number before every text, and compares an expression without
// affinity to a bound parameter without conversion, so `x > 5` alone would match all texts:
// each numeric bound is paired with a bound that keeps the other type out.
func (w *sqlWhere) valueTest(c *condNode, x string) {
	switch c.op {
	case opEq, opIn:
		var ph []string
		for _, v := range c.vals {
			if v.isNum {
				ph = append(ph, "?")
				w.args = append(w.args, v.num)
			}
			if v.str != "" { // "" is never a value
				ph = append(ph, "?")
				w.args = append(w.args, v.str)
			}
		}
		if len(ph) == 0 {
			w.b.WriteString("0")
			return
		}
		fmt.Fprintf(&w.b, "%s IN (%s)", x, strings.Join(ph, ", "))
	case opGt, opGe, opLt, opLe:
		v := c.vals[0]
		op := map[condOp]string{opGt: ">", opGe: ">=", opLt: "<", opLe: "<="}[c.op]
		upward := c.op == opGt || c.op == opGe
		w.b.WriteByte('(')
		if v.isNum {
			if upward {
				fmt.Fprintf(&w.b, "(%s %s ? AND %s < '') OR ", x, op, x)
			} else {
				fmt.Fprintf(&w.b, "%s %s ? OR ", x, op)
			}
			w.args = append(w.args, v.num)
		}
		if upward {
			fmt.Fprintf(&w.b, "%s %s ?", x, op)
		} else {
			fmt.Fprintf(&w.b, "(%s %s ? AND %s >= '')", x, op, x)
		}
		w.args = append(w.args, v.str)
		w.b.WriteByte(')')
	case opRange:
		lo, hi := c.vals[0], c.vals[1]
		w.b.WriteByte('(')
		if lo.isNum && hi.isNum {
			fmt.Fprintf(&w.b, "(%s >= ? AND %s <= ?) OR ", x, x)
			w.args = append(w.args, lo.num, hi.num)
		}
		fmt.Fprintf(&w.b, "(%s >= ? AND %s <= ?))", x, x)
		w.args = append(w.args, lo.str, hi.str)
	case opStartsWith:
		// The strings with prefix p are exactly those in [p, p with its last byte
		// incremented): a range an index can answer. (Text compares bytewise; the bound
		// need not be valid UTF-8, and a valid p never ends in 0xff.)
		p := c.vals[0].str
		if p == "" || p[len(p)-1] == 0xff {
			fmt.Fprintf(&w.b, "(%s >= ? AND substr(%s, 1, ?) = ?)", x, x)
			w.args = append(w.args, p, len([]rune(p)), p)
			return
		}
		fmt.Fprintf(&w.b, "(%s >= ? AND %s < ?)", x, x)
		w.args = append(w.args, p, p[:len(p)-1]+string([]byte{p[len(p)-1] + 1}))
	}
}

// sortKey is one parsed sort clause.
type sortKey struct {
	attr string
	desc bool
}

// parseSort parses "attr:asc" / "attr:desc" clauses over sortable attributes.
func parseSort(clauses []string, sortable []string) ([]sortKey, error) {
	keys := make([]sortKey, 0, len(clauses))
	for _, c := range clauses {
		i := strings.LastIndexByte(c, ':')
		if i < 0 {
			return nil, fmt.Errorf("sort %q: want `attribute:asc` or `attribute:desc`", c)
		}
		attr, dir := c[:i], c[i+1:]
		if dir != "asc" && dir != "desc" {
			return nil, fmt.Errorf("sort %q: want `attribute:asc` or `attribute:desc`", c)
		}
		if !attrRE.MatchString(attr) {
			return nil, fmt.Errorf("sort %q: invalid attribute name: use only [A-Za-z0-9_.-]", c)
		}
		if !covered(attr, sortable) {
			return nil, notAllowedError("sortable", attr, sortable)
		}
		keys = append(keys, sortKey{attr: attr, desc: dir == "desc"})
	}
	return keys, nil
}

// orderTerms returns the ORDER BY terms of one sort key. For a keyed attribute (keyedSorts)
// the term is its sort key column, which holds the whole order (sortkeys.go) and which the
// sort indexes of indexDefs are on, so a sorted query with a LIMIT can walk an index instead
// of sorting; with noIndex, a unary + keeps the planner from doing so. Other sortable paths
// are read from the facet columns (sortTerms). Either way missing values come last and
// numbers before strings in both directions. declared lists the attributes with a facet
// column.
func (k sortKey) orderTerms(noIndex bool, declared, keyed []string) []string {
	plus := ""
	if noIndex {
		plus = "+"
	}
	kind := byte('<')
	if k.desc {
		kind = '>'
	}
	if slices.Contains(keyed, k.attr) {
		return []string{plus + "d." + sortColumn(kind, k.attr)}
	}
	return sortTerms(plus+sortExpr(string(kind), k.attr, declared), k.desc)
}

// sortTerms orders by the sort key x: missing values last, numbers before strings in both
// directions.
func sortTerms(x string, desc bool) []string {
	if !desc {
		return []string{x + " IS NULL", x}
	}
	return []string{x + " IS NULL", "typeof(" + x + ") = 'text'", x + " DESC"}
}
