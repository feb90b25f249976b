package search

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/sqlitedb"
	"github.com/homeindex/homeindex/internal/testutil/sqlplan"
)

// randomFacet returns a path's values as flatFacets leaves them (sorted, without duplicates):
// none, one or several numbers and strings, drawn to collide often and to include what byte
// order gets wrong: negative numbers and -0, strings that are prefixes of others, NUL bytes,
// bytes above 0x7F.
func randomFacet(r *rand.Rand) *facet {
	f := &facet{}
	numbers := []float64{0, math.Copysign(0, -1), 1, -1, 2.5, -2.5, 1e300, -1e300, 1e-300, 41, 42, 1 << 53}
	strs := []string{"", "a", "ab", "abc", "a\x00", "a\x00b", "b", "é", "éa", "z", "\x7f", "\u00ff", "日本"}
	for range r.IntN(4) {
		if r.IntN(2) == 0 {
			f.nums = append(f.nums, numbers[r.IntN(len(numbers))])
		} else {
			f.strs = append(f.strs, strs[r.IntN(len(strs))])
		}
	}
	slices.Sort(f.nums)
	slices.Sort(f.strs)
	f.nums = slices.CompactFunc(f.nums, func(a, b float64) bool { return a == b })
	f.strs = slices.Compact(f.strs)
	return f
}

// facetObject is the facet column's object for f on path "a", as flatFacets writes it for a
// sortable attribute (the sort keys of several values; a single value is its own key).
func facetObject(f *facet) string {
	scalar := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	switch n := len(f.nums) + len(f.strs); {
	case n == 0:
		return `{}`
	case n == 1 && len(f.nums) == 1:
		return `{"v:a":` + scalar(f.nums[0]) + `}`
	case n == 1:
		return `{"v:a":` + scalar(f.strs[0]) + `}`
	}
	lo, hi := sortKeys(f)
	return `{"<:a":` + scalar(lo) + `,">:a":` + scalar(hi) + `}`
}

// The sort key columns order rows exactly as the expression terms over the facet columns that
// they replace, as SQLite evaluates those: numbers first, then strings, missing values last,
// both directions, ties and all.
func TestSortKeysOrderAsTheExpressionTerms(t *testing.T) {
	t.Parallel()
	db := sqlitedb.Open("file:" + filepath.Join(t.TempDir(), "keys.db"))
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (i INTEGER PRIMARY KEY, "f:a" BLOB, "s<:a" BLOB, "s>:a" BLOB)`); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		f := randomFacet(r)
		asc, desc := appendSortKey(nil, f, false), appendSortKey(nil, f, true)
		if _, err := db.ExecContext(ctx, `INSERT INTO t VALUES (?, jsonb(?), ?, ?)`, i, facetObject(f), asc, desc); err != nil {
			t.Fatal(err)
		}
	}
	order := func(by string) []int {
		rows, err := db.QueryContext(ctx, `SELECT i FROM t ORDER BY `+by+`, i`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []int
		for rows.Next() {
			var i int
			if err := rows.Scan(&i); err != nil {
				t.Fatal(err)
			}
			out = append(out, i)
		}
		return out
	}
	for _, desc := range []bool{false, true} {
		kind := byte('<')
		if desc {
			kind = '>'
		}
		x := sortKeyOf(`json_extract("f:a", '$."v:a"')`, `json_extract("f:a", '$."`+string(kind)+`:a"')`)
		want := order(strings.Join(sortTerms(x, desc), ", "))
		got := order(sortColumn(kind, "a"))
		if len(want) != 3000 || !slices.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Fatalf("desc=%v: the key column's order departs from the expression's at row %d of %d", desc, i, len(want))
		}
	}
}

// An index written before the sort key columns, with expression sort indexes over the facet
// columns, opens with the columns added and filled from the stored documents and the old sort
// indexes replaced by indexes on them; sorts answer as before, through SQL alone.
func TestEmbeddedMigratesSortKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	ix := openEmbeddedAt(t, path)
	settings := Settings{Filterable: []string{"size"}, Sortable: []string{"size"}}
	if err := ix.Files().Configure(ctx, settings); err != nil {
		t.Fatal(err)
	}
	var docs []json.RawMessage
	for i := range 40 {
		size := fmt.Sprint((i * 7) % 13)
		switch i % 10 {
		case 3:
			size = `[4, 11, 2]`
		case 5:
			size = `"big"`
		case 7:
			size = `null`
		}
		docs = append(docs, json.RawMessage(fmt.Sprintf(`{"id":"d%02d","size":%s}`, i, size)))
	}
	if err := ix.Files().Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	c := ix.(*embeddedIndex).files
	sorted := func(ix Index, sort string) string {
		t.Helper()
		res, err := ix.Files().Search(ctx, Query{Sort: []string{sort}, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return idList(res)
	}
	ix.(*embeddedIndex).tableOff = true
	wantAsc, wantDesc := sorted(ix, "size:asc"), sorted(ix, "size:desc")
	// What the version before the key columns had: the sort indexes over the facet column.
	writer := ix.(*embeddedIndex).writer
	stmts := []string{
		fmt.Sprintf(`DROP INDEX %q`, c.indexName(sortAsc, "size")),
		fmt.Sprintf(`DROP INDEX %q`, c.indexName(sortMulti, "size")),
		`ALTER TABLE files_docs DROP COLUMN "s<:size"`,
		`ALTER TABLE files_docs DROP COLUMN "s>:size"`,
	}
	for kind, n := range map[string]string{"<": "sa", ">": "sd"} {
		x := sortKeyOf(`json_extract("f:size", '$."v:size"')`, `json_extract("f:size", '$."`+kind+`:size"')`)
		stmts = append(stmts, fmt.Sprintf(`CREATE INDEX %q ON files_docs(%s)`, c.indexName(n, "size"), strings.Join(sortTerms(x, kind == ">"), ", ")))
	}
	for _, s := range stmts {
		if _, err := writer.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	ix = reopenEmbedded(t, ix, path)
	if up := Upgrades(ix); len(up) != 1 || !strings.HasPrefix(up[0], "files: sort key columns added (40 documents, ") {
		t.Errorf("upgrades %q, want the sort key columns added to the 40 documents", up)
	}
	ix = reopenEmbedded(t, ix, path)
	if up := Upgrades(ix); len(up) != 0 {
		t.Errorf("upgrades at the next open %q, want none", up)
	}
	// Rows an older daemon wrote beside the upgraded index (its INSERT names no key columns)
	// get their keys at the next open.
	if _, err := ix.(*embeddedIndex).writer.Exec(`UPDATE files_docs SET "s<:size" = NULL, "s>:size" = NULL WHERE id IN ('d00', 'd09')`); err != nil {
		t.Fatal(err)
	}
	ix = reopenEmbedded(t, ix, path)
	if up := Upgrades(ix); len(up) != 1 || !strings.HasPrefix(up[0], "files: sort keys filled in where an earlier version wrote documents without them (40 documents, ") {
		t.Errorf("upgrades after rows without keys %q, want their keys filled in", up)
	}
	names, _ := filesIndexes(t, ix)
	if want := sizeIndexes(ix); !slices.Equal(names, want) {
		t.Fatalf("indexes %q, want %q", names, want)
	}
	var keyed int
	if err := ix.(*embeddedIndex).writer.QueryRow(`SELECT count(*) FROM files_docs WHERE "s<:size" IS NOT NULL AND "s>:size" IS NOT NULL`).Scan(&keyed); err != nil || keyed != 40 {
		t.Fatalf("%d documents with sort keys (%v), want 40", keyed, err)
	}
	if got := sorted(ix, "size:asc"); got != wantAsc {
		t.Errorf("size:asc after migration: %s, want %s", got, wantAsc)
	}
	if got := sorted(ix, "size:desc"); got != wantDesc {
		t.Errorf("size:desc after migration: %s, want %s", got, wantDesc)
	}
	last := "d05 d15 d25 d35 d07 d17 d27 d37" // strings after numbers, missing values last
	if !strings.HasPrefix(wantAsc, "d00 d26 d39 d02 d28 d03 d04 d13") || !strings.HasSuffix(wantAsc, last) || !strings.HasSuffix(wantDesc, last) {
		t.Errorf("sorts: asc %s, desc %s", wantAsc, wantDesc)
	}
}

// An update rewrites an attribute's sort keys when its values change, and only then: a write
// that changes other fields (a module hop) leaves the key columns as they are, and a sort by
// SQL reads the new order at once.
func TestSortKeysFollowUpdates(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ix := openEmbedded(t)
	ix.(*embeddedIndex).tableOff = true
	if err := ix.Files().Configure(ctx, Settings{Filterable: []string{"next"}, Sortable: []string{"size"}}); err != nil {
		t.Fatal(err)
	}
	order := func() string {
		t.Helper()
		res, err := ix.Files().Search(ctx, Query{Sort: []string{"size:asc"}})
		if err != nil {
			t.Fatal(err)
		}
		return idList(res)
	}
	keysOf := func(id string) (asc, desc []byte) {
		t.Helper()
		if err := ix.(*embeddedIndex).writer.QueryRow(`SELECT "s<:size", "s>:size" FROM files_docs WHERE id = ?`, id).Scan(&asc, &desc); err != nil {
			t.Fatal(err)
		}
		return asc, desc
	}
	upsert(t, ix.Files(), `{"id":"a","size":5,"next":"m1"}`, `{"id":"b","size":7,"next":"m1"}`)
	if got := order(); got != "a b" {
		t.Fatalf("size:asc %s, want a b", got)
	}
	upsert(t, ix.Files(), `{"id":"a","size":[9,3],"next":"m2"}`)
	if got := order(); got != "a b" {
		t.Fatalf("after a's sizes became [9,3]: size:asc %s, want a b (3 first)", got)
	}
	asc, desc := keysOf("a")
	sizes := &facet{nums: []float64{3, 9}}
	if !slices.Equal(asc, appendSortKey(nil, sizes, false)) || !slices.Equal(desc, appendSortKey(nil, sizes, true)) {
		t.Fatalf("a's keys %x %x, want those of [3, 9]", asc, desc)
	}
	upsert(t, ix.Files(), `{"id":"a","size":11,"next":"m2"}`)
	if got := order(); got != "b a" {
		t.Fatalf("after a's size became 11: size:asc %s, want b a", got)
	}
	// A hop: b's next moves and it gains a field; its size, and so its keys, stay.
	before, _ := keysOf("b")
	upsert(t, ix.Files(), `{"id":"b","size":7,"next":"","noop":true}`)
	if after, _ := keysOf("b"); !slices.Equal(before, after) || order() != "b a" {
		t.Fatalf("after a hop on b: keys %x (were %x), size:asc %s", after, before, order())
	}
}

// A broad browse of the files collection by a one-valued attribute, descending, walks its
// ascending sort index (it has no descending one) and returns exactly the descending order:
// numbers from the largest, strings from the last, documents with several values by their
// largest, those without a value last, with conditions, a later sort key, and pages that
// cross from one type to the next; through Search (ties by write order) and SearchFiles (by
// id), as in the CLI. The ascending order is checked alike.
func TestOneValuedSortWalksItsAscendingIndexBothWays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ix := openEmbedded(t)
	ix.(*embeddedIndex).tableOff = true // SearchFiles through SQL, as in the CLI
	settings := FileSettings(Settings{Filterable: []string{"mtime"}, Sortable: []string{"size", "mtime"}})
	if err := ix.Files().Configure(ctx, settings); err != nil {
		t.Fatal(err)
	}
	c := ix.(*embeddedIndex).files
	if !c.oneValued("size") {
		t.Fatal("size is not one-valued: nothing to test")
	}
	if names, _ := filesIndexes(t, ix); slices.Contains(names, c.indexName(sortDesc, "size")) || !slices.Contains(names, c.indexName(sortAsc, "size")) {
		t.Fatalf("indexes %q: want size's ascending sort index and no descending one", names)
	}
	// Each document's size, and the keys a reference sort reads: type (0 number, 1 string,
	// 2 none), then its largest (descending) or smallest (ascending) value of that type.
	type ref struct {
		id         string
		mtime      int
		kind       int
		lo, hi     float64
		slo, shi   string
		writeOrder int
	}
	const n = 1200
	var docs []json.RawMessage
	var refs []ref
	for i := range n {
		v := float64(i*7%1201 - 600) // distinct for every i
		r := ref{id: fmt.Sprintf("s%04d", (i*389)%n), mtime: (i * 13) % 97, writeOrder: i}
		var size string
		switch {
		case i%10 < 6:
			size, r.lo, r.hi = fmt.Sprint(v), v, v
		case i%10 == 6:
			s := fmt.Sprintf("w%04d", i*37%1201)
			size, r.kind, r.slo, r.shi = fmt.Sprintf("%q", s), 1, s, s
		case i%10 == 7:
			size, r.kind = []string{"", "null", "[]"}[i%3], 2
		case i%10 == 8:
			size, r.lo, r.hi = fmt.Sprintf("[%v, %v]", v, v-0.25), v-0.25, v
		case i%20 == 9: // a number and a string: the number is the key both ways
			size, r.lo, r.hi = fmt.Sprintf(`["zz", %v]`, v+0.5), v+0.5, v+0.5
		default:
			a, z := fmt.Sprintf("a%04d", i), fmt.Sprintf("z%04d", i)
			size, r.kind, r.slo, r.shi = fmt.Sprintf("[%q, %q]", z, a), 1, a, z
		}
		doc := fmt.Sprintf(`{"id":%q,"mtime":%d`, r.id, r.mtime)
		if size != "" {
			doc += `,"size":` + size
		}
		docs = append(docs, json.RawMessage(doc+"}"))
		refs = append(refs, r)
	}
	if err := ix.Files().Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	// want is the reference order of the documents with mtime >= from.
	want := func(desc, byID, mtimeDesc bool, from int) []string {
		var rs []ref
		for _, r := range refs {
			if r.mtime >= from {
				rs = append(rs, r)
			}
		}
		slices.SortFunc(rs, func(a, b ref) int {
			if a.kind != b.kind {
				return a.kind - b.kind
			}
			var by int
			switch {
			case a.kind == 0 && desc:
				by = -cmp.Compare(a.hi, b.hi)
			case a.kind == 0:
				by = cmp.Compare(a.lo, b.lo)
			case a.kind == 1 && desc:
				by = -strings.Compare(a.shi, b.shi)
			case a.kind == 1:
				by = strings.Compare(a.slo, b.slo)
			}
			if by != 0 {
				return by
			}
			if mtimeDesc && a.mtime != b.mtime {
				return b.mtime - a.mtime
			}
			if byID {
				return strings.Compare(a.id, b.id)
			}
			return a.writeOrder - b.writeOrder
		})
		ids := make([]string, len(rs))
		for i, r := range rs {
			ids[i] = r.id
		}
		return ids
	}
	for _, tc := range []struct {
		sort      []string
		desc      bool
		mtimeDesc bool
		from      int
	}{
		{sort: []string{"size:desc"}, desc: true},
		{sort: []string{"size:desc"}, desc: true, from: 9},
		{sort: []string{"size:desc", "mtime:desc"}, desc: true, mtimeDesc: true},
		{sort: []string{"size:asc"}},
		{sort: []string{"size:asc", "mtime:desc"}, mtimeDesc: true, from: 9},
	} {
		filter := ""
		if tc.from > 0 {
			filter = fmt.Sprintf("mtime >= %d", tc.from)
		}
		for _, byID := range []bool{false, true} {
			if byID && len(tc.sort) > 1 {
				continue // SearchFiles takes one sort clause
			}
			w := want(tc.desc, byID, tc.mtimeDesc, tc.from)
			if len(w) < broadMatch {
				t.Fatalf("%v from %d: %d documents, want at least %d for a broad browse", tc.sort, tc.from, len(w), broadMatch)
			}
			// Pages of 97 cross each type's end at a different place in each.
			var got []string
			for offset := 0; offset < len(w)+97; offset += 97 {
				if byID {
					var filters []string
					if filter != "" {
						filters = []string{filter}
					}
					res, err := SearchFiles(ctx, ix, FileQuery{Filters: filters, Sort: tc.sort[0], Limit: 97, Offset: offset})
					if err != nil {
						t.Fatal(err)
					}
					for _, h := range res.Hits {
						var d struct{ ID string }
						if err := json.Unmarshal(h.Doc, &d); err != nil {
							t.Fatal(err)
						}
						got = append(got, d.ID)
					}
					continue
				}
				res, err := ix.Files().Search(ctx, Query{Filter: filter, Sort: tc.sort, Limit: 97, Offset: offset})
				if err != nil {
					t.Fatal(err)
				}
				if ids := idList(res); ids != "" {
					got = append(got, strings.Fields(ids)...)
				}
			}
			if !slices.Equal(got, w) {
				i := 0
				for i < min(len(got), len(w)) && got[i] == w[i] {
					i++
				}
				t.Errorf("%v from %d (ties by id: %v): %d hits, departing from the reference order at %d of %d: got %q…, want %q…",
					tc.sort, tc.from, byID, len(got), i, len(w), got[i:min(i+3, len(got))], w[i:min(i+3, len(w))])
			}
		}
	}
}

// The check at every open for rows without sort keys (migrateSortKeys) is a few index
// lookups in both collections, never a read of every row: at a million files that read was a
// second of every start.
func TestKeylessCheckReadsNoTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ix := openEmbedded(t)
	if err := ix.Files().Configure(ctx, FileSettings(Settings{Filterable: []string{"mtime"}, Sortable: []string{"mtime"}})); err != nil {
		t.Fatal(err)
	}
	if err := ix.Chunks().Configure(ctx, ChunkSettings); err != nil {
		t.Fatal(err)
	}
	w := ix.(*embeddedIndex).writer
	for _, c := range []*embeddedCollection{ix.(*embeddedIndex).files, ix.(*embeddedIndex).chunks} {
		keyed := c.keyedSorts(c.settings)
		if len(keyed) == 0 {
			t.Fatalf("%s: no keyed sorts: nothing to test", c.name)
		}
		if plan := sqlplan.Of(t, w, c.keylessQuery(keyed)); sqlplan.Scans(plan) {
			t.Errorf("%s: the check for rows without keys reads the table: %q", c.name, plan)
		}
	}
}
