package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// rawSpecs are the settings the raw walk is checked under: the daemon's files index (with the
// sort keys of its table), one declaring nested module attributes and path_entries' members
// (so the walk descends into objects and arrays of objects), and none.
var rawSpecs = []struct {
	name     string
	settings Settings
	keyed    []string
}{
	{"files", hopSettings, tableSorts},
	{"nested", FileSettings(Settings{
		Filterable: []string{"id", "next", "exif", "m1.list", "media.nested.camera", "path_entries.path", "paths_list", "", "zz"},
		Sortable:   []string{"exif.date_unix", "m1.camera", "size"},
	}), []string{"size", "exif.date_unix"}},
	{"chunks", ChunkSettings, ChunkSettings.Sortable}, // keyedSorts outside the files collection
	{"none", Settings{}, nil},
}

// chunkDocs are chunk documents as the outbox marshals them (PrepareMarshaled's input): long
// text with escapes and text outside ASCII, and a segment's extra fields.
func chunkDocs(n int) [][]byte {
	var out [][]byte
	for i := range n {
		d := map[string]any{"id": fmt.Sprintf("text_%016x_%d", i, i), "file_id": fmt.Sprintf("%016x", i), "module": "text",
			"text": strings.Repeat(fmt.Sprintf("Crème <brûlée> & \"tab\there\" %d\n", i), 1+i%40), "index": i, "segment": i % 3,
			"start_time": 1795745275.5 + float64(i), "char_offset": i * 7, "char_length": 40}
		if i%2 == 0 {
			d["page"], d["time_offset"], d["tags"] = i%9, 1.25, []any{"a", "B", nil, 3}
		}
		raw, err := json.Marshal(d)
		if err != nil {
			panic(err)
		}
		out = append(out, raw)
	}
	return out
}

// TestPrepareRawMatchesDecoded: prepareRaw gives, for every document the general path
// accepts (parseDoc, then prepareUpserts), the same id, stored bytes, facet objects, JSONB
// columns, sort keys, text and hash; and it declines exactly the documents indexForm
// rewrites or parseDoc refuses. The documents are PrepareFile's output for the fixtures of
// TestPrepareFileMatchesReference, those fixtures themselves compacted (keys out of order
// and given twice, nested module objects), and the benchmarks' documents.
func TestPrepareRawMatchesDecoded(t *testing.T) {
	t.Parallel()
	var docs [][]byte
	for _, raw := range prepareFixtures(3000, 11) {
		if p, err := PrepareFile([]byte(raw), "archive"); err == nil {
			docs = append(docs, p)
		}
		var b bytes.Buffer
		if json.Compact(&b, []byte(raw)) == nil {
			docs = append(docs, b.Bytes())
		}
	}
	for _, set := range [][]json.RawMessage{hopDocs(50, false), hopDocs(50, true), libraryDocs(50, "Photos/Été à Noël/%02d Crème brûlée %d.jpg")} {
		for _, raw := range set {
			p, err := PrepareFile(raw, "archive")
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, p)
		}
	}
	docs = append(docs, chunkDocs(200)...)
	docs = append(docs, []byte(`{"id":"a","id":5}`), []byte(`{"id":5,"id":"a"}`), []byte(`{"id":"a b"}`), []byte(`{"id":"x","n":1e400}`),
		[]byte(`{"id":"x","":{"a":1,"":[{}]},"e":[],"o":{},"s":"","z":[null,[1,[2]],{"q":null}]}`))
	accepted := 0
	for i, raw := range docs {
		accepted += checkPrepareRaw(t, i, raw)
	}
	pairs := len(docs) * len(rawSpecs)
	t.Logf("prepareRaw took %d of %d documents×specs", accepted, pairs)
	if accepted < pairs*3/4 {
		t.Fatalf("prepareRaw took %d of %d documents×specs: the fixtures no longer exercise it", accepted, pairs)
	}
}

func FuzzPrepareRawMatchesDecoded(f *testing.F) {
	for _, raw := range prepareFixtures(40, 12) {
		if p, err := PrepareFile([]byte(raw), "archive"); err == nil {
			f.Add([]byte(p))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			checkPrepareRaw(t, 0, b.Bytes())
		}
	})
}

// checkPrepareRaw compares prepareRaw with the general path for the compact JSON raw under
// each of rawSpecs; it returns how many specs prepareRaw took it under.
func checkPrepareRaw(t *testing.T, i int, raw []byte) (took int) {
	t.Helper()
	for _, sp := range rawSpecs {
		spec := sp.settings.spec()
		got, ok := prepareRaw(raw, spec, sp.keyed)
		parsed, problem := parseDoc(i, raw, true)
		var want []upsertDoc
		var err error
		if problem == "" {
			want, err = prepareUpserts([]parsedDoc{parsed}, spec, sp.keyed)
		}
		wantOK := problem == "" && err == nil && !needsDisplay(raw)
		if ok != wantOK {
			t.Fatalf("document %d %s (%s): prepareRaw took it: %v; the general path: problem %q, error %v, rewritten %v",
				i, raw, sp.name, ok, problem, err, needsDisplay(raw))
		}
		if !ok {
			continue
		}
		took++
		w := want[0]
		if got.value != nil {
			t.Fatalf("document %d: prepareRaw decoded a value", i)
		}
		w.value = nil
		for _, c := range []struct {
			what      string
			got, want any
		}{{"id", got.id, w.id}, {"raw", string(got.raw), string(w.raw)}, {"facets", facetStrings(got.facets), facetStrings(w.facets)},
			{"blobs", fmt.Sprintf("%x", got.blobs), fmt.Sprintf("%x", w.blobs)}, {"blob count", len(got.blobs), len(w.blobs)},
			{"text", got.text, w.text}, {"hash", got.hash, w.hash}, {"facets nil", got.facets == nil, w.facets == nil}} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Fatalf("document %d %s (%s): %s:\n got %v\nwant %v", i, raw, sp.name, c.what, c.got, c.want)
			}
		}
		for j := range got.blobs {
			if (got.blobs[j] == nil) != (w.blobs[j] == nil) {
				t.Fatalf("document %d %s (%s): blob %d: got %v, want %v", i, raw, sp.name, j, got.blobs[j], w.blobs[j])
			}
		}
	}
	return took
}

func facetStrings(m map[string][]byte) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// The outbox's chunks reach the embedded chunks collection through PrepareMarshaled, which
// prepares them from their bytes (no decoded value); they are then found by their text and
// filtered by their fields as Upsert's are.
func TestPrepareMarshaledChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ix := openEmbedded(t)
	chunks := ix.Chunks()
	if err := chunks.Configure(ctx, ChunkSettings); err != nil {
		t.Fatal(err)
	}
	var docs []json.RawMessage
	for _, d := range chunkDocs(20) {
		docs = append(docs, d)
	}
	u, err := PrepareMarshaled(chunks, docs)
	if err != nil {
		t.Fatal(err)
	}
	eu, ok := u.(*embeddedUpsert)
	if !ok {
		t.Fatalf("the embedded chunks collection prepared a %T, want its own preparation", u)
	}
	for _, d := range eu.prepared {
		if d.value != nil {
			t.Fatalf("chunk %s was decoded, want it prepared from its bytes", d.id)
		}
	}
	if err := u.Write(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := chunks.Search(ctx, Query{Q: "brûlée", Filter: `module = "text" AND file_id = "0000000000000007"`})
	if err != nil {
		t.Fatal(err)
	}
	if got := idSet(r); got != "text_0000000000000007_7" {
		t.Fatalf("search for a chunk's word and fields: %q", got)
	}
	bad, err := PrepareMarshaled(chunks, []json.RawMessage{json.RawMessage(`{"id":"a/b","text":"x"}`)})
	if err == nil || !strings.Contains(err.Error(), "a/b") {
		t.Fatalf("a chunk with a bad id: prepared %v, error %v; want the id named", bad, err)
	}
}
