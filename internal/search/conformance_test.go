package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The conformance suite runs against both backends (embedded_test.go, meili_test.go). Every
// case states the ids Meilisearch 1.21 returns; both backends must return exactly those.

// fixtureDocs exercise the edge semantics: numbers vs numeric strings, booleans vs "true",
// arrays (nested, empty, of objects), null, empty values, missing fields, nested objects.
var fixtureDocs = []string{
	`{"id":"d1","type":"text/plain","size":10,"mtime":300,"name":"Hello World","tags":["x","Y"],"flag":true,
	  "read":{"text":"quarterly zebra report","lang":"en"},"empty":"","nul":null,"num":"10","paths_list":["a/one.txt"]}`,
	`{"id":"d2","type":"Text/Plain","size":"10","mtime":100,"name":"hello","tags":[],"flag":"true",
	  "read":{"lang":"FR"},"empty":[],"num":9,"paths_list":["b/two.txt","a/dup.txt"]}`,
	`{"id":"d3","type":"image/png","size":9,"mtime":200,"name":"abc","tags":["z",["w"]],"flag":false,
	  "empty":{},"nul":[null],"num":"9","objs":[{"k":"a"},{"k":"b"}]}`,
	`{"id":"d4","type":"image/jpeg","size":12.5,"name":null,"flag":1,"read":{"text":"zebra crossing"},"num":10.5}`,
	`{"id":"d5","size":-1,"mtime":"abc","name":"zed","label":"Ça va","tags":"x","objs":[{"k":null}]}`,
	`{"id":"d6","type":"application/pdf","mtime":50,"name":"Hello World!","note":"invoice 2024"}`,
}

var fixtureSettings = Settings{
	Filterable: []string{"type", "size", "mtime", "name", "label", "tags", "flag", "read", "empty", "nul", "num", "objs", "paths_list"},
	Sortable:   []string{"mtime", "size", "name"},
}

// filterCases: filter → ids (any order).
var filterCases = []struct{ filter, want string }{
	{`type = "text/plain"`, "d1 d2"},
	{`type = 'TEXT/PLAIN'`, "d1 d2"},
	{`type != "text/plain"`, "d3 d4 d5 d6"},
	{`NOT type = "text/plain"`, "d3 d4 d5 d6"},
	{`size = 10`, "d1 d2"},
	{`size = "10"`, "d1 d2"},
	{`size > 9`, "d1 d4"},
	{`size >= 10`, "d1 d2 d4"},
	{`size < 10`, "d3 d5"},
	{`size <= 9`, "d2 d3 d5"},
	{`size 9 TO 11`, "d1 d3"},
	{`size -5 TO 10`, "d1 d2 d3 d5"},
	{`size IN [9, 12.5]`, "d3 d4"},
	{`mtime > 100`, "d1 d3 d5"},
	{`mtime EXISTS`, "d1 d2 d3 d5 d6"},
	{`mtime NOT EXISTS`, "d4"},
	{`NOT (mtime EXISTS)`, "d4"},
	{`mtime 0 TO 250 AND type EXISTS`, "d2 d3 d6"},
	{`name IS NULL`, "d4"},
	{`name IS NOT NULL`, "d1 d2 d3 d5 d6"},
	{`name = "hello world"`, "d1"},
	{`name IN [hello, abc]`, "d2 d3"},
	{`name NOT IN [hello, abc]`, "d1 d4 d5 d6"},
	{`name STARTS WITH hel`, "d1 d2 d6"},
	{`name NOT STARTS WITH hel`, "d3 d4 d5"},
	{`name > b`, "d1 d2 d5 d6"},
	{`label STARTS WITH "ça"`, "d5"},
	{`tags = y`, "d1"},
	{`tags = w`, "d3"},
	{`tags = x`, "d1 d5"},
	{`tags != x`, "d2 d3 d4 d6"},
	{`tags IS EMPTY`, "d2"},
	{`tags EXISTS`, "d1 d2 d3 d5"},
	{`empty IS EMPTY`, "d1 d2 d3"},
	{`empty IS NOT EMPTY`, "d4 d5 d6"},
	{`empty = ''`, ""},
	{`nul IS NULL`, "d1"},
	{`nul EXISTS`, "d1 d3"},
	{`flag = true`, "d1 d2"},
	{`flag = TRUE`, "d1 d2"},
	{`flag = false`, "d3"},
	{`flag = 1`, "d4"},
	{`flag > a`, "d1 d2 d3"},
	{`num = 10`, "d1"},
	{`num > 9`, "d4"},
	{`read.lang = fr`, "d2"},
	{`read.text EXISTS`, "d1 d4"},
	{`read EXISTS`, "d1 d2 d4"},
	{`objs.k = b`, "d3"},
	{`objs.k IS NULL`, "d5"},
	{`paths_list = "a/dup.txt"`, "d2"},
	{`paths_list STARTS WITH "a/"`, "d1 d2"},
	{`type = "text/plain" AND size > 9`, "d1"},
	{`type = "image/png" OR type = "image/jpeg"`, "d3 d4"},
	{`(type = "image/png" OR type = "image/jpeg") AND NOT size > 10`, "d3"},
	{`type = "image/png" OR type = "image/jpeg" AND size > 10`, "d3 d4"},
	{`NOT NOT type = "image/png"`, "d3"},
	{`type IN []`, ""},
	{`  `, "d1 d2 d3 d4 d5 d6"},
}

// sortCases: query → ids in order.
var sortCases = []struct {
	name string
	q    Query
	want string
}{
	{"mtime asc", Query{Sort: []string{"mtime:asc"}}, "d6 d2 d3 d1 d5 d4"},
	{"mtime desc", Query{Sort: []string{"mtime:desc"}}, "d1 d3 d2 d6 d5 d4"},
	{"size asc", Query{Sort: []string{"size:asc"}}, "d5 d3 d1 d4 d2 d6"},
	{"size desc", Query{Sort: []string{"size:desc"}}, "d4 d1 d3 d5 d2 d6"},
	{"name asc", Query{Sort: []string{"name:asc"}}, "d3 d2 d1 d6 d5 d4"},
	{"name desc", Query{Sort: []string{"name:desc"}}, "d5 d6 d1 d2 d3 d4"},
	{"filtered sorted page", Query{Filter: "mtime EXISTS", Sort: []string{"mtime:asc"}, Limit: 2, Offset: 1}, "d2 d3"},
	{"unsorted order", Query{}, "d1 d2 d3 d4 d5 d6"},
	{"limit", Query{Limit: 2}, "d1 d2"},
	{"offset", Query{Limit: 2, Offset: 2}, "d3 d4"},
	{"offset past end", Query{Offset: 10}, ""},
	{"text then sort", Query{Q: "zebra", Sort: []string{"mtime:desc"}}, "d1 d4"},
}

// textCases: query → ids (any order).
var textCases = []struct {
	name string
	q    Query
	want string
}{
	{"word in nested module field", Query{Q: "zebra"}, "d1 d4"},
	{"prefix of last word", Query{Q: "zeb"}, "d1 d4"},
	{"all words must match", Query{Q: "quarterly report"}, "d1"},
	{"last word is a prefix", Query{Q: "report zeb"}, "d1"},
	{"word order does not matter", Query{Q: "crossing zebra"}, "d4"},
	{"case insensitive", Query{Q: "HELLO"}, "d1 d2 d6"},
	{"top-level field", Query{Q: "invoice"}, "d6"},
	{"digits", Query{Q: "2024"}, "d6"},
	{"diacritics folded", Query{Q: "ca va"}, "d5"},
	{"no match", Query{Q: "nomatchword"}, ""},
	{"with filter", Query{Q: "zebra", Filter: `type = "text/plain"`}, "d1"},
	{"punctuation only", Query{Q: "  !? "}, "d1 d2 d3 d4 d5 d6"},
}

func runConformance(t *testing.T, open func(t *testing.T) Index) {
	t.Run("filters", func(t *testing.T) {
		t.Parallel()
		c := loadFixture(t, open(t).Files())
		for _, tc := range filterCases {
			t.Run(tc.filter, func(t *testing.T) {
				t.Parallel()
				res := search(t, c, Query{Filter: tc.filter, Limit: 100})
				if got := idSet(res); got != tc.want {
					t.Errorf("filter %q: got ids [%s], want [%s]", tc.filter, got, tc.want)
				}
				if want := int64(len(strings.Fields(tc.want))); res.Total != want {
					t.Errorf("filter %q: total = %d, want %d", tc.filter, res.Total, want)
				}
			})
		}
	})

	t.Run("sort and paging", func(t *testing.T) {
		t.Parallel()
		c := loadFixture(t, open(t).Files())
		for _, tc := range sortCases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				if got := idList(search(t, c, tc.q)); got != tc.want {
					t.Errorf("%+v: got ids [%s], want [%s]", tc.q, got, tc.want)
				}
			})
		}
	})

	t.Run("text", func(t *testing.T) {
		t.Parallel()
		c := loadFixture(t, open(t).Files())
		for _, tc := range textCases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				if got := idSet(search(t, c, tc.q)); got != tc.want {
					t.Errorf("%+v: got ids [%s], want [%s]", tc.q, got, tc.want)
				}
			})
		}
	})

	t.Run("invalid filters and sorts", func(t *testing.T) {
		t.Parallel()
		c := loadFixture(t, open(t).Files())
		for _, q := range []Query{
			{Filter: `note = x`},         // not filterable
			{Filter: `size = `},          // syntax
			{Filter: `size ~ 3`},         // unknown operator
			{Filter: `(size = 3`},        // unbalanced
			{Filter: `size IN [1, 2`},    // unbalanced
			{Filter: `name = 'abc`},      // unterminated quote
			{Filter: `size = 1 AND`},     // dangling
			{Filter: `size = 1 size`},    // trailing garbage
			{Sort: []string{"type:asc"}}, // not sortable
			{Sort: []string{"mtime:up"}},
			{Sort: []string{"mtime"}},
		} {
			_, err := c.Search(ctxT(t), q)
			if !errors.Is(err, ErrInvalidFilter) {
				t.Errorf("%+v: error = %v, want ErrInvalidFilter", q, err)
			}
		}
	})

	t.Run("upsert replaces whole documents", func(t *testing.T) {
		t.Parallel()
		c := loadFixture(t, open(t).Files())
		upsert(t, c, `{"id":"d1","type":"video/mp4","name":"renamed"}`)
		if got := idSet(search(t, c, Query{Q: "quarterly"})); got != "" {
			t.Errorf("old text still found: [%s]", got)
		}
		if got := idSet(search(t, c, Query{Filter: "tags = y"})); got != "" {
			t.Errorf("dropped field still filterable: [%s]", got)
		}
		if got := idSet(search(t, c, Query{Filter: `type = "video/mp4"`})); got != "d1" {
			t.Errorf("new value: got [%s], want [d1]", got)
		}
		hits := search(t, c, Query{Q: "renamed"}).Hits
		if len(hits) != 1 {
			t.Fatalf("got %d hits for the new text, want 1", len(hits))
		}
		var doc map[string]any
		if err := json.Unmarshal(hits[0], &doc); err != nil {
			t.Fatal(err)
		}
		if want := map[string]any{"id": "d1", "type": "video/mp4", "name": "renamed"}; fmt.Sprint(doc) != fmt.Sprint(want) {
			t.Errorf("stored document = %v, want %v", doc, want)
		}
		if n := count(t, c); n != 6 {
			t.Errorf("count = %d, want 6", n)
		}
	})

	t.Run("delete, count and ids", func(t *testing.T) {
		t.Parallel()
		c := loadFixture(t, open(t).Files())
		if err := c.Delete(ctxT(t), []string{"d2", "nope", "bad/id", "d4"}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, c); n != 4 {
			t.Errorf("count = %d, want 4", n)
		}
		if got := allIDs(t, c); got != "d1 d3 d5 d6" {
			t.Errorf("ids = [%s], want [d1 d3 d5 d6]", got)
		}
		if got := idSet(search(t, c, Query{Q: "zebra"})); got != "d1" {
			t.Errorf("deleted document still searchable: [%s]", got)
		}
		if err := c.Delete(ctxT(t), nil); err != nil {
			t.Errorf("empty delete: %v", err)
		}
	})

	t.Run("delete by filter", func(t *testing.T) {
		t.Parallel()
		c := loadFixture(t, open(t).Files())
		if err := c.DeleteByFilter(ctxT(t), `type = "image/png" OR size < 0`); err != nil {
			t.Fatal(err)
		}
		if got := allIDs(t, c); got != "d1 d2 d4 d6" {
			t.Errorf("ids = [%s], want [d1 d2 d4 d6]", got)
		}
		for _, f := range []string{`note = x`, `size = `, ``} {
			if err := c.DeleteByFilter(ctxT(t), f); !errors.Is(err, ErrInvalidFilter) {
				t.Errorf("DeleteByFilter(%q) error = %v, want ErrInvalidFilter", f, err)
			}
		}
		if n := count(t, c); n != 4 {
			t.Errorf("count after rejected deletes = %d, want 4", n)
		}
	})

	t.Run("invalid documents are rejected before writing", func(t *testing.T) {
		t.Parallel()
		c := open(t).Files()
		for _, bad := range []string{`{"id":"a/b"}`, `{"id":"has space"}`, `{"id":7}`, `{"name":"no id"}`, `[1]`,
			`{"id":"` + strings.Repeat("x", MaxIDBytes+1) + `"}`} {
			err := c.Upsert(ctxT(t), []json.RawMessage{json.RawMessage(`{"id":"good"}`), json.RawMessage(bad)})
			if !errors.Is(err, ErrInvalidDocument) {
				t.Errorf("upsert %s: error = %v, want ErrInvalidDocument", bad, err)
			}
		}
		err := c.Upsert(ctxT(t), []json.RawMessage{json.RawMessage(`{"id":"a/b"}`)})
		if err == nil || !strings.Contains(err.Error(), `"a/b"`) {
			t.Errorf("error %v does not name the bad id", err)
		}
		if n := count(t, c); n != 0 {
			t.Errorf("count = %d after rejected upserts, want 0", n)
		}
		upsert(t, c, `{"id":"`+strings.Repeat("x", MaxIDBytes)+`"}`, `{"id":"A-z_09"}`)
		if n := count(t, c); n != 2 {
			t.Errorf("count = %d, want 2", n)
		}
	})

	t.Run("a prepared upsert writes nothing until written", func(t *testing.T) {
		t.Parallel()
		ix := open(t)
		// The files collection with PrepareFile in front, as the daemon writes it, and a bare one.
		for name, c := range map[string]Collection{"files": WithFileDocuments(ix, "").Files(), "chunks": ix.Chunks()} {
			// A bad document fails the preparation, or the write of a backend that prepares nothing.
			u, err := PrepareUpsert(c, []json.RawMessage{json.RawMessage(`{"id":"good"}`), json.RawMessage(`{"id":"a/b"}`)})
			if err == nil {
				err = u.Write(ctxT(t))
			}
			if !errors.Is(err, ErrInvalidDocument) {
				t.Errorf("%s: a prepared upsert of a bad id: error = %v, want ErrInvalidDocument", name, err)
			}
			u, err = PrepareUpsert(c, []json.RawMessage{json.RawMessage(`{"id":"p1","note":"prepared walrus"}`),
				json.RawMessage(`{"id":"p2","note":"second"}`), json.RawMessage(`{"id":"p1","note":"prepared narwhal"}`)})
			if err != nil {
				t.Fatalf("%s: prepare: %v", name, err)
			}
			if n := count(t, c); n != 0 {
				t.Errorf("%s: count = %d after preparing, want 0", name, n)
			}
			if err := u.Write(ctxT(t)); err != nil {
				t.Fatalf("%s: write: %v", name, err)
			}
			if got := allIDs(t, c); got != "p1 p2" {
				t.Errorf("%s: ids = [%s], want [p1 p2]", name, got)
			}
			var stored []string
			for _, h := range search(t, c, Query{}).Hits {
				stored = append(stored, string(h))
			}
			if all := strings.Join(stored, " "); !strings.Contains(all, "narwhal") || strings.Contains(all, "walrus") {
				t.Errorf("%s: stored %s, want the last duplicate of p1", name, all)
			}
		}
	})

	t.Run("ids page through large collections", func(t *testing.T) {
		t.Parallel()
		c := open(t).Chunks()
		if err := c.Configure(ctxT(t), Settings{Filterable: []string{"n", "even"}, Sortable: []string{"n"}}); err != nil {
			t.Fatal(err)
		}
		const n = 2500
		docs := make([]json.RawMessage, n)
		want := make([]string, n)
		for i := range docs {
			want[i] = fmt.Sprintf("c%05d", i)
			docs[i] = json.RawMessage(fmt.Sprintf(`{"id":%q,"text":"chunk %d","n":%d,"even":%t}`, want[i], i, i, i%2 == 0))
		}
		if err := c.Upsert(ctxT(t), docs); err != nil {
			t.Fatal(err)
		}
		// Queries matching more than broadMatch documents and fewer (the embedded backend
		// reads them differently), with and without text.
		for _, tc := range []struct {
			q    Query
			want string
		}{
			{Query{Filter: "even = true", Sort: []string{"n:desc"}, Limit: 3}, "c02498 c02496 c02494"},
			{Query{Filter: "even = true", Sort: []string{"n:asc"}, Limit: 2, Offset: 10}, "c00020 c00022"},
			{Query{Filter: "even = true AND n < 50", Sort: []string{"n:desc"}, Limit: 2}, "c00048 c00046"},
			{Query{Filter: "n >= 2497", Limit: 5}, "c02497 c02498 c02499"},
			{Query{Q: "chunk", Sort: []string{"n:desc"}, Limit: 2}, "c02499 c02498"},
			{Query{Q: "chunk 1234"}, "c01234"},
		} {
			if got := idList(search(t, c, tc.q)); got != tc.want {
				t.Errorf("%+v: got [%s], want [%s]", tc.q, got, tc.want)
			}
		}
		var got []string
		if err := c.IDs(ctxT(t), func(id string) error { got = append(got, id); return nil }); err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("IDs returned %d ids, want %d", len(got), len(want))
		}
		stop := errors.New("stop")
		calls := 0
		err := c.IDs(ctxT(t), func(string) error { calls++; return stop })
		if !errors.Is(err, stop) || calls != 1 {
			t.Errorf("IDs with failing fn: err = %v after %d calls, want stop after 1", err, calls)
		}
		// Totals are exact and paging reaches the last hit, past Meilisearch's default cap.
		if res := search(t, c, Query{Limit: 5}); res.Total != n {
			t.Errorf("total = %d, want %d", res.Total, n)
		}
		if res := search(t, c, Query{Q: "chunk", Limit: 5}); res.Total != n {
			t.Errorf("text total = %d, want %d", res.Total, n)
		}
		if res := search(t, c, Query{Filter: "even = true", Limit: 5}); res.Total != n/2 {
			t.Errorf("filtered total = %d, want %d", res.Total, n/2)
		}
		res := search(t, c, Query{Sort: []string{"n:asc"}, Offset: n - 3, Limit: 5})
		if got := idList(res); got != "c02497 c02498 c02499" {
			t.Errorf("last page: got [%s]", got)
		}
		if got := idList(search(t, c, Query{Q: "chunk", Sort: []string{"n:asc"}, Offset: 1500, Limit: 2})); got != "c01500 c01501" {
			t.Errorf("text page past 1000: got [%s]", got)
		}
	})

	// In both collections: the embedded backend sorts the chunks through their sort key
	// columns (sortkeys.go), the files on m (no sort index there) through the facet column.
	t.Run("arrays sort by their smallest value ascending and largest descending", func(t *testing.T) {
		t.Parallel()
		ix := open(t)
		for name, c := range map[string]Collection{"files": ix.Files(), "chunks": ix.Chunks()} {
			if err := c.Configure(ctxT(t), Settings{Sortable: []string{"m"}}); err != nil {
				t.Fatal(err)
			}
			upsert(t, c, `{"id":"a1","m":[3,20]}`, `{"id":"a2","m":5}`, `{"id":"a3","m":["b","A"]}`,
				`{"id":"a4","m":"c"}`, `{"id":"a5","m":null}`, `{"id":"a6","m":[]}`, `{"id":"a7","m":true}`)
			for _, tc := range []struct{ sort, want string }{
				{"m:asc", "a1 a2 a3 a4 a7 a5 a6"},
				{"m:desc", "a1 a2 a7 a4 a3 a5 a6"},
			} {
				if got := idList(search(t, c, Query{Sort: []string{tc.sort}})); got != tc.want {
					t.Errorf("%s: sort %s: got [%s], want [%s]", name, tc.sort, got, tc.want)
				}
			}
		}
	})

	t.Run("configure changes what is sortable", func(t *testing.T) {
		t.Parallel()
		c := open(t).Chunks()
		if err := c.Configure(ctxT(t), Settings{Sortable: []string{"n"}}); err != nil {
			t.Fatal(err)
		}
		upsert(t, c, `{"id":"c1","n":3,"m":"z"}`, `{"id":"c2","n":1,"m":"x"}`, `{"id":"c3","n":2,"m":"y"}`)
		if got := idList(search(t, c, Query{Sort: []string{"n:asc"}})); got != "c2 c3 c1" {
			t.Errorf("n:asc: got [%s], want [c2 c3 c1]", got)
		}
		if err := c.Configure(ctxT(t), Settings{Sortable: []string{"m"}}); err != nil {
			t.Fatal(err)
		}
		if got := idList(search(t, c, Query{Sort: []string{"m:desc"}})); got != "c1 c3 c2" {
			t.Errorf("m:desc after configure: got [%s], want [c1 c3 c2]", got)
		}
		if _, err := c.Search(ctxT(t), Query{Sort: []string{"n:asc"}}); !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("sort on an attribute no longer sortable: error = %v, want ErrInvalidFilter", err)
		}
		upsert(t, c, `{"id":"c4","n":0,"m":"zz"}`)
		if got := idList(search(t, c, Query{Sort: []string{"m:desc"}})); got != "c4 c1 c3 c2" {
			t.Errorf("m:desc after a new document: got [%s], want [c4 c1 c3 c2]", got)
		}
	})

	t.Run("last duplicate in a batch wins", func(t *testing.T) {
		t.Parallel()
		c := open(t).Files()
		upsert(t, c, `{"id":"x","v":"first"}`, `{"id":"x","v":"second"}`)
		if n := count(t, c); n != 1 {
			t.Errorf("count = %d, want 1", n)
		}
		if got := idSet(search(t, c, Query{Q: "second"})); got != "x" {
			t.Errorf("search second: got [%s], want [x]", got)
		}
		if got := idSet(search(t, c, Query{Q: "first"})); got != "" {
			t.Errorf("search first: got [%s], want none", got)
		}
	})

	t.Run("collections are separate", func(t *testing.T) {
		t.Parallel()
		ix := open(t)
		upsert(t, ix.Chunks(), `{"id":"x1","text":"chunk text"}`)
		if n := count(t, ix.Files()); n != 0 {
			t.Errorf("files count = %d, want 0", n)
		}
		if n := count(t, ix.Chunks()); n != 1 {
			t.Errorf("chunks count = %d, want 1", n)
		}
	})

	t.Run("configure changes what is filterable", func(t *testing.T) {
		t.Parallel()
		c := loadFixture(t, open(t).Files())
		if _, err := c.Search(ctxT(t), Query{Filter: "note EXISTS"}); !errors.Is(err, ErrInvalidFilter) {
			t.Fatalf("filter on an undeclared attribute: error = %v, want ErrInvalidFilter", err)
		}
		s := fixtureSettings
		s.Filterable = append(slices.Clone(s.Filterable), "note")
		if err := c.Configure(ctxT(t), s); err != nil {
			t.Fatal(err)
		}
		if err := c.Configure(ctxT(t), s); err != nil { // unchanged: a no-op
			t.Fatal(err)
		}
		if got := idSet(search(t, c, Query{Filter: "note EXISTS"})); got != "d6" {
			t.Errorf("note EXISTS after configure: got [%s], want [d6]", got)
		}
		if err := c.Configure(ctxT(t), Settings{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Search(ctxT(t), Query{Filter: "type EXISTS"}); !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("filter after clearing settings: error = %v, want ErrInvalidFilter", err)
		}
		if err := c.Configure(ctxT(t), Settings{Filterable: []string{"bad name"}}); err == nil {
			t.Error("configure with an invalid attribute name succeeded")
		}
	})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func loadFixture(t *testing.T, c Collection) Collection {
	t.Helper()
	if err := c.Configure(ctxT(t), fixtureSettings); err != nil {
		t.Fatalf("configure: %v", err)
	}
	upsert(t, c, fixtureDocs...)
	return c
}

func upsert(t *testing.T, c Collection, docs ...string) {
	t.Helper()
	raw := make([]json.RawMessage, len(docs))
	for i, d := range docs {
		raw[i] = json.RawMessage(d)
	}
	if err := c.Upsert(ctxT(t), raw); err != nil {
		t.Fatalf("upsert: %v", err)
	}
}

func search(t *testing.T, c Collection, q Query) Result {
	t.Helper()
	res, err := c.Search(ctxT(t), q)
	if err != nil {
		t.Fatalf("search %+v: %v", q, err)
	}
	return res
}

func count(t *testing.T, c Collection) int64 {
	t.Helper()
	n, err := c.Count(ctxT(t))
	if err != nil {
		t.Fatalf("count: %v", err)
	}
	return n
}

func allIDs(t *testing.T, c Collection) string {
	t.Helper()
	var ids []string
	if err := c.IDs(ctxT(t), func(id string) error { ids = append(ids, id); return nil }); err != nil {
		t.Fatalf("ids: %v", err)
	}
	slices.Sort(ids)
	return strings.Join(ids, " ")
}

// idList returns the hits' ids in order, space separated.
func idList(res Result) string {
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		var d struct{ ID string }
		_ = json.Unmarshal(h, &d)
		ids[i] = d.ID
	}
	return strings.Join(ids, " ")
}

// idSet returns the hits' ids sorted, space separated.
func idSet(res Result) string {
	ids := strings.Fields(idList(res))
	slices.Sort(ids)
	return strings.Join(ids, " ")
}
