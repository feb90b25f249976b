package search

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/testutil/meilitest"
	"github.com/homeindex/homeindex/protocol"
)

// oddDoc has paths that are not UTF-8, one with a newline, and a 255-byte name. Two show
// alike ("caf\ufffd.txt"): Meilisearch keeps one display key for both, so they share an mtime
// here (with different mtimes a hit would give both the one Meilisearch kept).
func oddDoc(id string) (protocol.Document, []byte) {
	long := strings.Repeat("\xe9", 251) + ".txt"
	d := protocol.Document{ID: id, Type: "text/plain", Size: 3,
		Paths: protocol.Paths{{Path: "caf\xe9.txt", Mtime: 1}, {Path: "bad\xff\xfename.txt", Mtime: 2},
			{Path: "caf\xe8.txt", Mtime: 1}, {Path: "two\nlines.txt", Mtime: 4}, {Path: "d\xe9/" + long, Mtime: 5}},
		Fields: map[string]json.RawMessage{"note": json.RawMessage(`"from caf\udce9 \ud83d\ude00"`)}}
	for _, p := range d.Paths {
		d.PathsList = append(d.PathsList, p.Path)
	}
	b, _ := json.Marshal(d)
	return d, b
}

func runNames(t *testing.T, ix Index) {
	c := ix.Files()
	if err := c.Configure(ctxT(t), Settings{Filterable: []string{"paths_list", "type"}, Sortable: []string{"mtime"}}); err != nil {
		t.Fatal(err)
	}
	want, raw := oddDoc("odd1")
	_, plainRaw := oddDoc("odd2")
	plain := `{"id":"plain","paths":{"plain.txt":1},"paths_list":["plain.txt"],"note":"ordinary"}`
	if err := c.Upsert(ctxT(t), []json.RawMessage{raw, plainRaw, json.RawMessage(plain)}); err != nil {
		t.Fatalf("upsert: %v", err)
	}
	for _, q := range []Query{{Q: "caf"}, {Q: "lines"}, {Filter: `type = "text/plain"`}, {Q: "bad"}} {
		res := search(t, c, q)
		if res.Total != 2 {
			t.Fatalf("%+v: %d hits, want 2 (%s)", q, res.Total, idList(res))
		}
		for _, h := range res.Hits {
			var got protocol.Document
			if err := json.Unmarshal(h, &got); err != nil {
				t.Fatalf("hit %s: %v", h, err)
			}
			if len(got.Paths) != len(want.Paths) || len(got.PathsList) != len(want.PathsList) {
				t.Fatalf("%+v: hit paths %v / %q, want %v", q, got.Paths, got.PathsList, want.Paths)
			}
			for i := range want.Paths {
				if got.Paths[i] != want.Paths[i] && ix.Name() == "embedded" {
					t.Errorf("%+v: path %d = %v, want %v", q, i, got.Paths[i], want.Paths[i])
				}
				if got.PathsList[i] != want.PathsList[i] {
					t.Errorf("%+v: paths_list %d = %q, want %q", q, i, got.PathsList[i], want.PathsList[i])
				}
			}
			if !samePaths(got.Paths, want.Paths) {
				t.Errorf("%+v: paths %v, want %v in any order", q, got.Paths, want.Paths)
			}
			if _, ok := got.Fields[FieldPathsExact]; ok {
				t.Errorf("hit keeps %s", FieldPathsExact)
			}
			if note := string(got.Fields["note"]); note != `"from caf\ufffd \ud83d\ude00"` && note != `"from caf� 😀"` {
				t.Errorf("note %s: want its display form", note)
			}
		}
	}
	// Documents without odd names are stored and returned as they were.
	res := search(t, c, Query{Q: "ordinary"})
	if len(res.Hits) != 1 || strings.Contains(string(res.Hits[0]), FieldPathsExact) {
		t.Fatalf("plain hit %s", res.Hits)
	}
	// The exact form is not searchable text.
	if res := search(t, c, Query{Q: "Y2Fm"}); res.Total != 0 && ix.Name() == "embedded" {
		t.Errorf("base64 of the exact names is searchable: %s", idList(res))
	}
}

func samePaths(a, b protocol.Paths) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[protocol.PathEntry]int{}
	for _, e := range a {
		m[e]++
	}
	for _, e := range b {
		m[e]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestNamesEmbedded(t *testing.T) {
	t.Parallel()
	runNames(t, openEmbedded(t))
}

func TestNamesMeilisearch(t *testing.T) {
	t.Parallel()
	open := meiliOpener(meilitest.Start(t))
	runNames(t, open(t))
	// Why the display form exists: Meilisearch fails a whole batch over one lone surrogate.
	ix := open(t)
	_, raw := oddDoc("odd")
	err := ix.Files().(*meiliCollection).addDocuments(ctxT(t), []json.RawMessage{json.RawMessage(`{"id":"fine"}`), raw})
	if err == nil {
		t.Fatal("Meilisearch took a lone surrogate: the display form may no longer be needed")
	}
	if n := count(t, ix.Files()); n != 0 {
		t.Fatalf("%d documents stored from the failed batch", n)
	}
}

func TestIndexFormKeepsOrdinaryDocuments(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`{"id":"a","paths":{"é/😀.txt":1},"t":"\u00e9 \ud83d\ude00 \\udce9"}`, `{"id":"b"}`} {
		got, _, err := indexForm([]byte(doc))
		if err != nil || string(got) != doc {
			t.Errorf("indexForm(%s) = %s, %v", doc, got, err)
		}
	}
	got, rewritten, err := indexForm([]byte(`{"id":"c","t":"x\ud800y\udc80` + "\xff" + `"}`))
	if err != nil || string(got) != `{"id":"c","t":"x\ufffdy\ufffd\ufffd"}` || !rewritten {
		t.Errorf("lone surrogates and bad bytes: %s, rewritten %v, %v", got, rewritten, err)
	}
	if _, rewritten, _ := indexForm([]byte(`{"id":"d","t":"plain"}`)); rewritten {
		t.Error("a document without escapes or bad bytes went through the rewrite")
	}
}
