package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/testutil/meilitest"
)

// The files search conformance test: the same documents and chunks go into both backends,
// every query must give exactly the same result on both (hits in order, snippets, facet
// counts, totals), and the result must be the expected one.

var fileCore = Settings{
	Filterable: []string{"id", "next", "type", "size", "mtime", "copies", "paths_list", "has_archive_paths", "offline", "media"},
	Sortable:   []string{"mtime", "size", "copies"},
}

var fileFixture = []string{
	`{"id":"f1","paths":{"docs/Report.pdf":1563100000},"mtime":1563100000,"size":5000,"type":"application/pdf","paths_list":["docs/Report.pdf"],"copies":1,"offline":false}`,
	`{"id":"f2","paths":{"archive/usb1/photos/IMG_1.JPG":1500000000},"mtime":1500000000,"size":300000,"type":"image/jpeg","paths_list":["archive/usb1/photos/IMG_1.JPG"],"copies":1,"offline":true,
	  "media":{"date_unix":1563109445,"camera":"Canon EOS 5D","year":2019}}`,
	`{"id":"f3","paths":{"photos/IMG_2.jpg":1530000000,"archive/usb1/photos/IMG_2.jpg":1530000000},"mtime":1530000000,"size":200000,"type":"image/jpeg","copies":2,"offline":false,
	  "media":{"date_unix":1514764800,"camera_make":"Nikon","camera_model":"D3"}}`,
	`{"id":"f4","paths":{"notes/zebra notes.txt":1600000000},"mtime":1600000000,"size":10,"type":"text/plain","copies":1,"offline":false}`,
	`{"id":"f5","paths":{"music/song.mp3":1400000000},"mtime":1400000000,"size":4000000,"type":"audio/mpeg","copies":1,"offline":false}`,
	`{"id":"f6","paths":{"misc/blob.bin":1450000000},"mtime":1450000000,"size":7,"type":"application/octet-stream","copies":1,"offline":false}`,
	// Newer than every other match for "zebra", which they hold once, deep in their content.
	`{"id":"f7","paths":{"notes/minutes.txt":1700000000},"mtime":1700000000,"size":20,"type":"text/plain","copies":1,"offline":false}`,
	`{"id":"f8","paths":{"notes/agenda.txt":1700000000},"mtime":1700000000,"size":30,"type":"text/plain","copies":1,"offline":false}`,
}

var chunkFixture = []string{
	`{"id":"text_f1_0","file_id":"f1","module":"text","text":"Introduction to the annual figures","index":0,"segment":0,"page":1}`,
	`{"id":"text_f1_1","file_id":"f1","module":"text","text":"The quarterly report shows a zebra crossing near the office, and more words follow here to make the snippet longer than its window of words so that it gets cut","index":1,"segment":1,"page":2}`,
	`{"id":"text_f1_2","file_id":"f1","module":"text","text":"Zebras again on page three","index":2,"segment":2,"page":3}`,
	`{"id":"text_f1_3","file_id":"f1","module":"text","text":"zebra four","index":3,"segment":3,"page":4}`,
	`{"id":"text_f1_4","file_id":"f1","module":"text","text":"zebra five","index":4,"segment":4,"page":5}`,
	`{"id":"tr_f5_0","file_id":"f5","module":"tr","text":"a zebra sings <b>loudly</b>","index":0,"segment":0,"time_offset":12.5,"time_length":3}`,
	`{"id":"tr_gone_0","file_id":"gone","module":"tr","text":"zebra of a deleted file","index":0,"segment":0}`,
	`{"id":"text_f7_40","file_id":"f7","module":"text","text":"deep in the minutes a zebra appears once","index":40,"segment":40,"page":41}`,
	`{"id":"text_f8_3","file_id":"f8","module":"text","text":"item four: the zebra","index":3,"segment":3,"page":4}`,
}

func loadFiles(t *testing.T, ix Index) Index {
	t.Helper()
	return loadFilesThen(t, ix, nil)
}

// loadFilesThen configures ix, calls between (if set), then writes the fixture.
func loadFilesThen(t *testing.T, ix Index, between func()) Index {
	t.Helper()
	ix = WithFileDocuments(ix, "archive")
	if err := ix.Files().Configure(ctxT(t), FileSettings(fileCore)); err != nil {
		t.Fatal(err)
	}
	if err := ix.Chunks().Configure(ctxT(t), ChunkSettings); err != nil {
		t.Fatal(err)
	}
	if between != nil {
		between()
	}
	upsert(t, ix.Files(), fileFixture...)
	upsert(t, ix.Chunks(), chunkFixture...)
	return ix
}

// tableFacets are the facets the file table holds in these tests: every one they ask for.
var tableFacets = append(slices.Clone(DefaultFacets), "media.camera")

// embeddedVariants opens the embedded backend three ways, so each search path is compared
// with Meilisearch: "embedded" builds its file table before the documents arrive (every
// write then updates it), "embedded-built" after, "embedded-sql" has none (SQL only).
func embeddedVariants(t *testing.T) map[string]*embeddedIndex {
	out := map[string]*embeddedIndex{}
	for _, name := range []string{"embedded", "embedded-built", "embedded-sql"} {
		ix, err := OpenEmbedded(filepath.Join(t.TempDir(), "index.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		e := ix.(*embeddedIndex)
		e.tableOff = name == "embedded-sql"
		build := func() {
			if err := e.buildTable(ctxT(t), tableFacets); err != nil {
				t.Fatal(err)
			}
		}
		switch name {
		case "embedded":
			loadFilesThen(t, e, build)
		case "embedded-built":
			loadFilesThen(t, e, nil)
			build()
		default:
			loadFilesThen(t, e, nil)
		}
		out[name] = e
	}
	return out
}

// canonical re-encodes a result with every document's keys sorted, so the two backends'
// answers compare byte for byte.
func canonical(t *testing.T, r FileResult) string {
	t.Helper()
	for i, h := range r.Hits {
		var m map[string]any
		if err := json.Unmarshal(h.Doc, &m); err != nil {
			t.Fatal(err)
		}
		r.Hits[i].Doc = mustJSON(m)
	}
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func hitIDs(r FileResult) string {
	var ids []string
	for _, h := range r.Hits {
		var d struct{ ID string }
		_ = json.Unmarshal(h.Doc, &d)
		ids = append(ids, d.ID)
	}
	return strings.Join(ids, " ")
}

func facetString(fc []FacetCount) string {
	var s []string
	for _, f := range fc {
		s = append(s, fmt.Sprintf("%s:%d", f.Value, f.Count))
	}
	return strings.Join(s, " ")
}

func snippetText(s Snippet) string {
	var b strings.Builder
	for _, p := range s.Parts {
		if p.Match {
			b.WriteString("[" + p.Text + "]")
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func TestSearchFilesSameOnBothBackends(t *testing.T) {
	t.Parallel()
	backends := map[string]Index{"meilisearch": loadFiles(t, meiliOpener(meilitest.Start(t))(t))}
	embedded := embeddedVariants(t)
	for name, e := range embedded {
		backends[name] = WithFileDocuments(e, "archive")
	}
	names := []string{"embedded", "embedded-built", "embedded-sql", "meilisearch"}
	cases := []struct {
		name  string
		q     FileQuery
		check func(t *testing.T, r FileResult)
		// sqlFilter: the file table cannot answer the filter, which SQL then evaluates.
		sqlFilter bool
	}{
		{"word in content and in a name, snippets and facets", FileQuery{Q: "zebra", Facets: DefaultFacets, Snippets: 3}, func(t *testing.T, r FileResult) {
			// Relevance: f4 has the word in its name; f1 in four chunks; f7, f8 and f5 in one
			// each, newest first (f7 and f8 tie on date: by id).
			if got := hitIDs(r); got != "f4 f1 f7 f8 f5" || r.Total != 5 {
				t.Errorf("hits [%s] total %d, want [f4 f1 f7 f8 f5] 5 (own fields, then matching chunks, then newest, then id)", got, r.Total)
			}
			f1 := r.Hits[1].Snippets
			if len(f1) != 3 {
				t.Fatalf("f1 has %d snippets, want 3", len(f1))
			}
			if got := snippetText(f1[0]); !strings.HasPrefix(got, "The quarterly report shows a [zebra] crossing") || !strings.HasSuffix(got, "…") {
				t.Errorf("snippet %q", got)
			}
			if got := snippetText(f1[1]); got != "[Zebras] again on page three" {
				t.Errorf("prefix match snippet %q", got)
			}
			if f1[0].Module != "text" || string(f1[0].Location["page"]) != "2" || string(f1[2].Location["page"]) != "4" {
				t.Errorf("snippet module/location: %+v %+v", f1[0], f1[2])
			}
			f5 := r.Hits[4].Snippets
			if len(f5) != 1 || snippetText(f5[0]) != "a [zebra] sings <b>loudly</b>" || string(f5[0].Location["time_offset"]) != "12.5" {
				t.Errorf("f5 snippets %+v", f5)
			}
			if len(r.Hits[0].Snippets) != 0 {
				t.Errorf("f4 matched by name has snippets %+v", r.Hits[0].Snippets)
			}
			if got := facetString(r.Facets["kind"]); got != "text:3 audio:1 document:1" {
				t.Errorf("kind facet %s", got)
			}
		}, false},
		{"newest ignores relevance", FileQuery{Q: "zebra", Sort: "newest"}, func(t *testing.T, r FileResult) {
			if got := hitIDs(r); got != "f7 f8 f4 f1 f5" {
				t.Errorf("hits [%s], want [f7 f8 f4 f1 f5]", got)
			}
		}, false},
		{"relevance pages", FileQuery{Q: "zebra", Limit: 2, Offset: 2, Snippets: 1}, func(t *testing.T, r FileResult) {
			if got := hitIDs(r); got != "f7 f8" || r.Total != 5 || len(r.Hits[0].Snippets) != 1 || string(r.Hits[0].Snippets[0].Location["page"]) != "41" {
				t.Errorf("hits [%s] total %d %+v, want [f7 f8] 5, f7's snippet on page 41", got, r.Total, r.Hits)
			}
		}, false},
		{"relevance last page", FileQuery{Q: "zebra", Limit: 2, Offset: 4, Facets: []string{"kind"}}, func(t *testing.T, r FileResult) {
			if got := hitIDs(r); got != "f5" || r.Total != 5 || facetString(r.Facets["kind"]) != "text:3 audio:1 document:1" {
				t.Errorf("hits [%s] total %d %v", got, r.Total, r.Facets)
			}
		}, false},
		{"relevance with a filter", FileQuery{Q: "zebra", Filters: []string{"kind = text"}}, func(t *testing.T, r FileResult) {
			if got := hitIDs(r); got != "f4 f7 f8" || r.Total != 3 {
				t.Errorf("hits [%s] total %d", got, r.Total)
			}
		}, false},
		{"two words in one chunk", FileQuery{Q: "quarterly zebra", Snippets: 1}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f1" || snippetText(r.Hits[0].Snippets[0])[:40] != "The [quarterly] report shows a [zebra] c" {
				t.Errorf("got [%s] %+v", hitIDs(r), r.Hits)
			}
		}, false},
		{"words spread over two chunks do not match", FileQuery{Q: "annual zebra"}, func(t *testing.T, r FileResult) {
			if r.Total != 0 {
				t.Errorf("total %d", r.Total)
			}
		}, false},
		{"browse with every facet", FileQuery{Facets: append(DefaultFacets, "media.camera")}, func(t *testing.T, r FileResult) {
			want := map[string]string{
				"kind":      "text:3 image:2 audio:1 document:1 other:1",
				"extension": "txt:3 jpg:2 bin:1 mp3:1 pdf:1",
				"drive":     "local:7 usb1:2",
				"year":      "2019:2 2023:2 2014:1 2015:1 2018:1 2020:1",
				"camera":    "canon eos 5d:1 nikon d3:1",
				"offline":   "false:7 true:1",
			}
			for f, w := range want {
				if got := facetString(r.Facets[f]); got != w {
					t.Errorf("facet %s: %s, want %s", f, got, w)
				}
			}
			if r.Total != 8 || len(r.Hits) != 8 {
				t.Errorf("total %d hits %d", r.Total, len(r.Hits))
			}
		}, false},
		{"kind filter and camera facet", FileQuery{Filters: []string{`kind = image`}, Facets: []string{"camera"}}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f2 f3" || facetString(r.Facets["camera"]) != "canon eos 5d:1 nikon d3:1" {
				t.Errorf("got [%s] %v", hitIDs(r), r.Facets)
			}
		}, false},
		{"date range: taken in 2019 or modified then", FileQuery{Filters: []string{"date 1546300800 TO 1577836799"}, Sort: "oldest"}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f1 f2" {
				t.Errorf("got [%s]", hitIDs(r))
			}
		}, false},
		{"filters compose", FileQuery{Filters: []string{"size >= 10", "size <= 300000", `drive = usb1`}}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f2 f3" {
				t.Errorf("got [%s]", hitIDs(r))
			}
		}, true},
		{"kind IN and NOT offline, newest", FileQuery{Filters: []string{"kind IN [image, audio]", "NOT offline = true"}, Sort: "newest"}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f3 f5" {
				t.Errorf("got [%s]", hitIDs(r))
			}
		}, false},
		{"word and date comparisons, oldest", FileQuery{Q: "zebra", Filters: []string{"date > 1563100000 AND date <= 1700000000"}, Sort: "oldest", Facets: DefaultFacets}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f4 f7 f8" || facetString(r.Facets["kind"]) != "text:3" {
				t.Errorf("got [%s] %v", hitIDs(r), r.Facets)
			}
		}, false},
		{"camera OR extension by name", FileQuery{Filters: []string{`camera = "canon eos 5d" OR extension = TXT`}, Sort: "name", Facets: []string{"extension"}}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f8 f2 f7 f4" || facetString(r.Facets["extension"]) != "txt:3 jpg:1" {
				t.Errorf("got [%s] %v", hitIDs(r), r.Facets)
			}
		}, false},
		{"not on a drive of several copies", FileQuery{Filters: []string{"NOT drive = usb1"}, Sort: "oldest"}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f5 f6 f1 f4 f7 f8" {
				t.Errorf("got [%s]", hitIDs(r))
			}
		}, false},
		{"word, year and kind, newest", FileQuery{Q: "zebra", Filters: []string{"year IN [2019, 2023]", "kind != audio"}, Sort: "newest", Snippets: 1}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f7 f8 f1" || len(r.Hits[2].Snippets) != 1 {
				t.Errorf("got [%s] %+v", hitIDs(r), r.Hits)
			}
		}, false},
		{"a number the table cannot tell from its text", FileQuery{Filters: []string{"year = 2019.0"}, Sort: "oldest"}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f1 f2" {
				t.Errorf("got [%s]", hitIDs(r))
			}
		}, true},
		{"a date against a word", FileQuery{Filters: []string{"date 1 TO 1600000000 OR kind = audio"}, Sort: "newest"}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f4 f2 f1 f3 f6 f5" {
				t.Errorf("got [%s]", hitIDs(r))
			}
		}, false},
		{"word, largest", FileQuery{Q: "zebra", Sort: "largest"}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f5 f1 f8 f7 f4" {
				t.Errorf("got [%s]", hitIDs(r))
			}
		}, false},
		{"word, smallest, second page", FileQuery{Q: "zebra", Sort: "smallest", Limit: 2, Offset: 1, Snippets: 1}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f7 f8" || r.Total != 5 || len(r.Hits[0].Snippets) != 1 {
				t.Errorf("got [%s] %d", hitIDs(r), r.Total)
			}
		}, false},
		{"filter by kind, name", FileQuery{Filters: []string{"kind = text"}, Sort: "name", Facets: []string{"drive"}}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f8 f7 f4" || facetString(r.Facets["drive"]) != "local:3" {
				t.Errorf("got [%s] %v", hitIDs(r), r.Facets)
			}
		}, false},
		{"filter by drive, size descending by attribute", FileQuery{Filters: []string{"drive IN [local, usb1]"}, Sort: "size:desc", Limit: 3}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f5 f2 f3" || r.Total != 8 {
				t.Errorf("got [%s] %d", hitIDs(r), r.Total)
			}
		}, false},
		{"a facet the table holds under EXISTS", FileQuery{Filters: []string{"camera EXISTS"}, Sort: "oldest"}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f3 f2" {
				t.Errorf("got [%s]", hitIDs(r))
			}
		}, true},
		{"largest", FileQuery{Sort: "largest", Limit: 3}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f5 f2 f3" || r.Total != 8 {
				t.Errorf("got [%s] %d", hitIDs(r), r.Total)
			}
		}, false},
		{"name", FileQuery{Sort: "name"}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f8 f6 f2 f3 f7 f1 f5 f4" {
				t.Errorf("got [%s]", hitIDs(r))
			}
		}, false},
		{"oldest second page", FileQuery{Sort: "oldest", Limit: 2, Offset: 2}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f3 f1" {
				t.Errorf("got [%s]", hitIDs(r))
			}
		}, false},
		{"year filter by word and facet", FileQuery{Q: "img", Filters: []string{"year = 2019"}, Facets: []string{"drive"}}, func(t *testing.T, r FileResult) {
			if hitIDs(r) != "f2" || facetString(r.Facets["drive"]) != "usb1:1" {
				t.Errorf("got [%s] %v", hitIDs(r), r.Facets)
			}
		}, false},
	}
	compare := func(t *testing.T, q FileQuery, check func(t *testing.T, r FileResult), sqlFilter bool) {
		var first, firstName string
		for _, name := range names {
			var before, sqlBefore int64
			if e := embedded[name]; e != nil {
				before, sqlBefore = e.tableSearches.Load(), e.tableSQLFilters.Load()
			}
			r, err := SearchFiles(ctxT(t), backends[name], q)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if e := embedded[name]; e != nil {
				if used := e.tableSearches.Load() > before; used != (name == "embedded" || name == "embedded-built") {
					t.Errorf("%s: file table used: %v", name, used)
				}
			}
			if e := embedded[name]; e != nil && !e.tableOff {
				if bySQL := e.tableSQLFilters.Load() > sqlBefore; bySQL != sqlFilter {
					t.Errorf("%s: filter evaluated by SQL: %v, want %v", name, bySQL, sqlFilter)
				}
			}
			c := canonical(t, r)
			t.Run(name, func(t *testing.T) { check(t, r) })
			if first == "" {
				first, firstName = c, name
			} else if c != first {
				t.Errorf("%s and %s disagree:\n%s\n---\n%s", firstName, name, first, c)
			}
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { compare(t, tc.q, tc.check, tc.sqlFilter) })
	}
	// Deletions reach the file table too.
	for _, name := range names {
		if err := backends[name].Files().Delete(ctxT(t), []string{"f7"}); err != nil {
			t.Fatal(err)
		}
		if err := backends[name].Chunks().Delete(ctxT(t), []string{"text_f8_3"}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("after deleting f7 and f8's chunk", func(t *testing.T) {
		compare(t, FileQuery{Q: "zebra", Facets: []string{"kind"}}, func(t *testing.T, r FileResult) {
			if got := hitIDs(r); got != "f4 f1 f5" || facetString(r.Facets["kind"]) != "audio:1 document:1 text:1" {
				t.Errorf("hits [%s] %v", got, r.Facets)
			}
		}, false)
	})
	// Hits come back in the metadata document's shape: paths as an object, in order.
	r, err := SearchFiles(ctxT(t), backends["meilisearch"], FileQuery{Filters: []string{"id = f3"}})
	if err != nil || len(r.Hits) != 1 {
		t.Fatalf("%v %v", r, err)
	}
	var d map[string]json.RawMessage
	_ = json.Unmarshal(r.Hits[0].Doc, &d)
	if got := string(d["paths"]); got != `{"photos/IMG_2.jpg":1530000000,"archive/usb1/photos/IMG_2.jpg":1530000000}` {
		t.Errorf("paths %s", got)
	}
	if _, ok := d[fieldPathEntries]; ok {
		t.Error("path_entries left in the hit")
	}
	for _, bad := range []FileQuery{{Sort: "sideways"}, {Facets: []string{"note"}}, {Filters: []string{"size ~ 1"}}} {
		for name, ix := range backends {
			if _, err := SearchFiles(ctxT(t), ix, bad); err == nil {
				t.Errorf("%s: %+v: no error", name, bad)
			}
		}
	}
}

func TestPrepareFileNeverKeysByPath(t *testing.T) {
	raw, err := PrepareFile(json.RawMessage(fileFixture[2]), "archive")
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	_ = json.Unmarshal(raw, &d)
	if _, ok := d["paths"]; ok {
		t.Error("paths object kept")
	}
	want := map[string]any{"kind": "image", "extension": "jpg", "drive": []any{"local", "usb1"}, "year": 2018.0,
		"date": 1514764800.0, "camera": "Nikon D3", "name": "IMG_2.jpg", "sort_name": "img_2.jpg"}
	for k, v := range want {
		if !reflect.DeepEqual(d[k], v) {
			t.Errorf("%s = %v, want %v", k, d[k], v)
		}
	}
	if back := restoreFile(raw); !strings.Contains(string(back), `"paths":{"photos/IMG_2.jpg":1530000000,"archive/usb1/photos/IMG_2.jpg":1530000000}`) {
		t.Errorf("restored %s", back)
	}
}

// A file table is only used at the generation it reflects: a write by another handle on the
// same database (another process) is seen at once, through SQL, and the table is rebuilt.
func TestFileTableFollowsWritesFromElsewhere(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "index.db")
	open := func() *embeddedIndex {
		ix, err := OpenEmbedded(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix.(*embeddedIndex)
	}
	a := open()
	loadFiles(t, a)
	if err := a.buildTable(ctxT(t), DefaultFacets); err != nil {
		t.Fatal(err)
	}
	search := func() (string, bool) {
		t.Helper()
		before := a.tableSearches.Load()
		r, err := SearchFiles(ctxT(t), WithFileDocuments(a, "archive"), FileQuery{Q: "zebra", Facets: []string{"kind"}})
		if err != nil {
			t.Fatal(err)
		}
		return hitIDs(r) + " | " + facetString(r.Facets["kind"]), a.tableSearches.Load() > before
	}
	if got, used := search(); got != "f4 f1 f7 f8 f5 | text:3 audio:1 document:1" || !used {
		t.Fatalf("before: %s (table used: %v)", got, used)
	}
	// Hold the rebuild back before the other handle writes (not after: a rebuild could start
	// in between), so the next search must use SQL.
	a.table.mu.Lock()
	a.table.building = true
	a.table.mu.Unlock()
	b := open()
	upsert(t, WithFileDocuments(b, "archive").Files(),
		`{"id":"f9","paths":{"zebra/photo.png":1800000000},"mtime":1800000000,"size":1,"type":"image/png"}`)
	want := "f9 f4 f1 f7 f8 f5 | text:3 audio:1 document:1 image:1" // f9: named after the word, newest
	if got, used := search(); got != want || used {
		t.Fatalf("after another handle wrote: %s (table used: %v), want %s on SQL", got, used, want)
	}
	a.table.mu.Lock()
	a.table.building = false
	a.table.mu.Unlock()
	if err := a.buildTable(ctxT(t), DefaultFacets); err != nil {
		t.Fatal(err)
	}
	if got, used := search(); got != want || !used {
		t.Fatalf("after the rebuild: %s (table used: %v), want %s from the table", got, used, want)
	}
}

// A batch large enough to be prepared on several goroutines lands whole and in order: every
// document is prepared (kind, name, drives derived from its paths) and is found by its name.
func TestLargeFileBatchPreparedInParallel(t *testing.T) {
	t.Parallel()
	ix := WithFileDocuments(openEmbedded(t), "archive")
	ctx := context.Background()
	if err := ix.Files().Configure(ctx, FileSettings(Settings{})); err != nil {
		t.Fatal(err)
	}
	const n = 4*parallelMin + 37
	docs := make([]json.RawMessage, n)
	for i := range docs {
		docs[i] = json.RawMessage(fmt.Sprintf(`{"id":"d%04d","type":"image/jpeg","size":%d,"next":"","paths":{"archive/usb%d/photo%04d.jpg":1530000000}}`, i, i, i%3, i))
	}
	if err := ix.Files().Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, parallelMin - 1, parallelMin, 2*parallelMin + 1, n - 1} {
		r, err := SearchFiles(ctx, ix, FileQuery{Q: fmt.Sprintf("photo%04d", i)})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("d%04d", i)
		if got := hitIDs(r); got != want {
			t.Fatalf("search photo%04d: got [%s], want the one hit %s", i, got, want)
		}
		var d struct {
			Kind  string
			Drive []string
			Paths map[string]float64
		}
		if err := json.Unmarshal(r.Hits[0].Doc, &d); err != nil {
			t.Fatal(err)
		}
		if wantDrive := fmt.Sprintf("usb%d", i%3); d.Kind != "image" || len(d.Drive) != 1 || d.Drive[0] != wantDrive || len(d.Paths) != 1 {
			t.Errorf("hit %s not prepared: %s", want, r.Hits[0].Doc)
		}
	}
}

// TestPreparedFilesStoredAsWhenChecked: documents PrepareFile prepared reach the embedded
// backend marked as json.Marshal's form, which it neither checks nor compacts again
// (canonicalPreparer). What it stores must be what the checked path stores: the same bytes
// for each document, whether PrepareFile's output is kept (ordinary names, spaces around the
// input's tokens) or rewritten for the index (names that are not UTF-8); and a batch holding a
// document PrepareFile cannot prepare fails as a whole, naming it.
func TestPreparedFilesStoredAsWhenChecked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, odd := oddDoc("odd1")
	docs := []json.RawMessage{
		odd,
		json.RawMessage(`{ "id" : "spaced", "type" : "text/plain", "size" : 3, "paths" : { "a b/c <d>.txt" : 1530000000 } }`),
		json.RawMessage(`{"id":"plain","type":"image/jpeg","size":9,"next":"","paths":{"archive/usb1/p.jpg":1530000000.5}}`),
		// Paths PrepareFile cannot read: passed on as it is, and checked as any document.
		json.RawMessage(`{ "id" : "badpaths", "paths" : 5 }`),
	}
	stored := func(ix Index, files Collection) map[string]string {
		t.Helper()
		if err := files.Configure(ctx, FileSettings(Settings{Filterable: []string{"type"}})); err != nil {
			t.Fatal(err)
		}
		if err := files.Upsert(ctx, docs); err != nil {
			t.Fatal(err)
		}
		rows, err := backend(ix).(*embeddedIndex).reader.QueryContext(ctx, `SELECT id, doc FROM files_docs`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var id, doc string
			if err := rows.Scan(&id, &doc); err != nil {
				t.Fatal(err)
			}
			out[id] = doc
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// The checked path: each document prepared by hand, as prepareFiles does, and upserted as
	// plain JSON.
	plainIx := openEmbedded(t)
	var prepared []json.RawMessage
	for _, d := range docs {
		p, err := PrepareFile(d, "archive")
		if err != nil {
			p = d
		}
		prepared = append(prepared, p)
	}
	want := stored(plainIx, checkedOnly{plainIx.Files(), prepared})
	ix := WithFileDocuments(openEmbedded(t), "archive")
	got := stored(ix, ix.Files())
	if len(got) != len(docs) {
		t.Fatalf("stored %d documents, want %d: %v", len(got), len(docs), got)
	}
	for id, doc := range want {
		if got[id] != doc {
			t.Errorf("%s stored as\n%s\nwant (checked and compacted)\n%s", id, got[id], doc)
		}
	}
	bad := append(slices.Clone(docs), json.RawMessage(`["not", "an", "object"]`))
	if err := ix.Files().Upsert(ctx, bad); !errors.Is(err, ErrInvalidDocument) || !strings.Contains(err.Error(), "document 4") {
		t.Errorf("batch with a document that is not an object: %v, want ErrInvalidDocument naming document 4", err)
	}
}

// checkedOnly upserts its documents through c's plain Upsert, whatever it is given.
type checkedOnly struct {
	Collection
	docs []json.RawMessage
}

func (c checkedOnly) Upsert(ctx context.Context, _ []json.RawMessage) error {
	return c.Collection.Upsert(ctx, c.docs)
}
