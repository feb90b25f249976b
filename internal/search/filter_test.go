package search

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// dumpFilter renders an AST as an S-expression, for tests.
func dumpFilter(n filterNode) string {
	switch n := n.(type) {
	case nil:
		return "<nil>"
	case *orNode:
		return dumpKids("OR", n.kids)
	case *andNode:
		return dumpKids("AND", n.kids)
	case *notNode:
		return "(NOT " + dumpFilter(n.kid) + ")"
	case *condNode:
		ops := map[condOp]string{opEq: "=", opGt: ">", opGe: ">=", opLt: "<", opLe: "<=", opRange: "TO",
			opIn: "IN", opExists: "EXISTS", opIsNull: "NULL", opIsEmpty: "EMPTY", opStartsWith: "STARTS"}
		vals := make([]string, len(n.vals))
		for i, v := range n.vals {
			vals[i] = fmt.Sprintf("%q", v.str)
			if v.isNum {
				vals[i] += fmt.Sprintf("#%g", v.num)
			}
		}
		return strings.TrimSpace(fmt.Sprintf("%s %s %s", n.attr, ops[n.op], strings.Join(vals, ",")))
	}
	return fmt.Sprintf("%T", n)
}

func dumpKids(op string, kids []filterNode) string {
	parts := make([]string, len(kids))
	for i, k := range kids {
		parts[i] = dumpFilter(k)
	}
	return "(" + op + " " + strings.Join(parts, " ") + ")"
}

func TestParseFilter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{``, `<nil>`},
		{`a = 1`, `a = "1"#1`},
		{`a=1`, `a = "1"#1`},
		{`a != x`, `(NOT a = "x")`},
		{`a > -1.5e3`, `a > "-1.5e3"#-1500`},
		{`a >= 1 AND b <= 2`, `(AND a >= "1"#1 b <= "2"#2)`},
		{`a < 1 OR b = 2 AND c = 3`, `(OR a < "1"#1 (AND b = "2"#2 c = "3"#3))`},
		{`NOT a = 1 AND b = 2`, `(AND (NOT a = "1"#1) b = "2"#2)`},
		{`NOT (a = 1 OR b = 2)`, `(NOT (OR a = "1"#1 b = "2"#2))`},
		{`NOT NOT a EXISTS`, `(NOT (NOT a EXISTS))`},
		{`a 1 TO 10`, `a TO "1"#1,"10"#10`},
		{`a IN [x, 'y z', "W",]`, `a IN "x","y z","w"`},
		{`a IN []`, `a IN`},
		{`a NOT IN [1]`, `(NOT a IN "1"#1)`},
		{`a EXISTS`, `a EXISTS`},
		{`a NOT EXISTS`, `(NOT a EXISTS)`},
		{`a IS NULL`, `a NULL`},
		{`a IS NOT NULL`, `(NOT a NULL)`},
		{`a IS EMPTY`, `a EMPTY`},
		{`a IS NOT EMPTY`, `(NOT a EMPTY)`},
		{`a STARTS WITH Foo`, `a STARTS "foo"`},
		{`a NOT STARTS WITH foo`, `(NOT a STARTS "foo")`},
		{`read.lang = en`, `read.lang = "en"`},
		{`"quoted-attr" = x`, `quoted-attr = "x"`},
		{`a = 'it\'s'`, `a = "it's"`},
		{`a = "say \"hi\""`, `a = "say \"hi\""`},
		{`a = ' Padded '`, `a = "padded"`},
		{`a = 'AND'`, `a = "and"`},
		{`a = and`, `a = "and"`},
		{`a = 1x`, `a = "1x"`},
		{`a = é`, `a = "é"`},
	} {
		n, err := parseFilter(tc.in)
		if err != nil {
			t.Errorf("parseFilter(%q): %v", tc.in, err)
			continue
		}
		if got := dumpFilter(n); got != tc.want {
			t.Errorf("parseFilter(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestParseFilterErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, wantMsg string }{
		{`a = `, "expected a value at offset 4, got end of filter"},
		{`a ~ b`, "unexpected character '~'"},
		{`a ! b`, "unexpected `!`"},
		{`(a = 1`, "missing `)`"},
		{`((a = 1) OR b = 2`, "missing `)`"},
		{`a = 1)`, "unexpected `)`"},
		{`a IN [1, 2`, "missing `]`"},
		{`a IN [1 2]`, "expected `,` or `]`"},
		{`a IN 1`, "expected `[`"},
		{`a = [1]`, "expected a value"},
		{`a = 'x`, "unterminated quoted value"},
		{`a = "x`, "unterminated quoted value"},
		{`a = 'x\'`, "unterminated quoted value"},
		{`a = 1 AND`, "expected a condition"},
		{`a = 1 OR NOT`, "expected a condition"},
		{`NOT`, "expected a condition"},
		{`a = 1 b = 2`, "missing AND or OR"},
		{`a`, "expected an operator"},
		{`a IS`, "expected NULL or EMPTY"},
		{`a IS FOO`, "expected NULL or EMPTY"},
		{`a NOT IS NULL`, "expected an operator"},
		{`a STARTS b`, "expected `WITH`"},
		{`a 1 TO`, "expected a value"},
		{`a 1 10`, "expected `TO`"},
		{`a = AND`, "keyword `AND`"},
		{`AND = 1`, "keyword `AND`"},
		{`a CONTAINS b`, "not supported"},
		{`"a b" = 1`, "invalid attribute name"},
		{`a = 1 AND ()`, "expected an attribute"},
		{`a = text/plain`, "unexpected character '/'"},
	} {
		_, err := parseFilter(tc.in)
		if err == nil {
			t.Errorf("parseFilter(%q) succeeded, want an error containing %q", tc.in, tc.wantMsg)
			continue
		}
		if !strings.Contains(err.Error(), tc.wantMsg) {
			t.Errorf("parseFilter(%q) error = %q, want it to contain %q", tc.in, err, tc.wantMsg)
		}
	}
}

func TestCompileFilterBindsValues(t *testing.T) {
	t.Parallel()
	n, err := parseFilter(`name = "x'); DROP TABLE files_docs; --"`)
	if err != nil {
		t.Fatal(err)
	}
	sql, args, err := compileFilter(n, []string{"name"}, []string{"name"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sql, "DROP") {
		t.Errorf("value reached the SQL text: %s", sql)
	}
	if len(args) == 0 || args[0] != `x'); drop table files_docs; --` {
		t.Errorf("args = %q, want the normalized value bound", args)
	}
	if _, _, err := compileFilter(n, []string{"other"}, []string{"other"}); err == nil || !strings.Contains(err.Error(), "`name` is not filterable") {
		t.Errorf("compile with name not filterable: error = %v", err)
	}
}

func TestFlatFacets(t *testing.T) {
	t.Parallel()
	doc := map[string]any{
		"a":   map[string]any{"b": nil},
		"arr": []any{"X", []any{"y", 3.0}, ""},
		"o.k": "lit",
		"o":   []any{map[string]any{"k": "V"}, map[string]any{}},
		"e":   map[string]any{},
		"n":   2.5,
		"s":   "  Mixed Case ",
		"x":   "ignored: not declared",
	}
	got := flatFacets(doc, facetSpec{filterable: []string{"a", "arr", "o", "o.k", "e", "n", "s"}, sortable: []string{"arr", "n"}})
	// One object per owning attribute: "o.k" is declared, so it owns its path rather than "o";
	// "x" is not declared and appears nowhere.
	want := map[string]string{
		"a":   `{"f:a":1,"f:a.b":3}`,
		"arr": `{"<:arr":3,">:arr":3,"f:arr":9,"m:arr":[3,"x","y"]}`,
		"e":   `{"f:e":5}`,
		"n":   `{"v:n":2.5}`,
		"o":   `{"f:o":1}`,
		"o.k": `{"f:o.k":9,"m:o.k":["lit","v"]}`,
		"s":   `{"v:s":"mixed case"}`,
	}
	if len(got) != len(want) {
		t.Errorf("flatFacets gave %d objects, want %d: %q", len(got), len(want), got)
	}
	for a, w := range want {
		if string(got[a]) != w {
			t.Errorf("flatFacets[%q] =\n%s\nwant\n%s", a, got[a], w)
		}
	}
}

func TestFacetOwnerAndChangedColumns(t *testing.T) {
	t.Parallel()
	declared := []string{"o", "o.k", "o.k.z", "size"}
	for path, want := range map[string]string{"o": "o", "o.j": "o", "o.k": "o.k", "o.k.y": "o.k", "o.k.z.q": "o.k.z", "sizes": "", "size": "size"} {
		if got := owner(path, declared); got != want {
			t.Errorf("owner(%q) = %q, want %q", path, got, want)
		}
	}
	fs := newFacetSQL("files_docs", []string{"next", "size", "type"}, nil)
	stored := []sql.RawBytes{[]byte(`{"v:next":"m1"}`), []byte(`{"v:size":1}`), nil}
	vals := []any{[]byte(`{"v:next":""}`), []byte(`{"v:size":1}`), nil} // fs.declared's order
	ch := changed(stored, vals)
	if !slices.Equal(ch, []bool{true, false, false}) {
		t.Fatalf("changed = %v, want only next", ch)
	}
	hash := int64(1)
	if got, want := fs.update(ch, &hash), `UPDATE files_docs SET doc = ?, text_hash = ?, "f:next" = ? WHERE seq = ?`; got != want {
		t.Errorf("update = %s, want %s", got, want)
	}
	// A column that loses its keys is cleared; one that gains some is set.
	ch = changed(stored, []any{[]byte(`{"v:next":"m1"}`), nil, []byte(`{"v:type":"a"}`)})
	if !slices.Equal(ch, []bool{false, true, true}) {
		t.Fatalf("changed = %v, want size and type", ch)
	}
}

func TestFTSQuery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"  ?! ", ""},
		{"zebra", `"zebra"*`},
		{"zebra ", `"zebra"`},
		{`quarterly "report" zeb`, `"quarterly" "report" "zeb"*`},
		{`a-b OR NEAR(c)`, `"a" "b" "OR" "NEAR" "c"*`},
		{"café", `"café"*`},
	} {
		if got := ftsQuery(tc.in); got != tc.want {
			t.Errorf("ftsQuery(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
