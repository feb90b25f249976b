package search

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkPrepareForIndex: the CPU a files index write spends on one document before its
// SQL (PrepareFile, then its facets, sort keys, JSONB columns and text), for a document as a
// first sync renders it: names as a benchmark makes them (plain) and as a library has them
// (spaces, a dash outside ASCII). path=raw is the write's own (prepareRaw), path=decoded the
// general one it replaces for such documents (parseDoc, then prepareUpserts' work).
func BenchmarkPrepareForIndex(b *testing.B) {
	for _, tc := range []struct {
		name string
		docs []json.RawMessage
	}{{"plain", hopDocs(1000, false)}, {"spaces", libraryDocs(1000, "Music/The Band – Live at Home/%02d Track number %d.flac")},
		{"accents", libraryDocs(1000, "Photos/Été à Noël/%02d Crème brûlée %d.jpg")}} {
		for _, path := range []string{"raw", "decoded"} {
			b.Run("names="+tc.name+"/path="+path, func(b *testing.B) {
				var spec facetSpec
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if i%250 == 0 {
						spec = hopSettings.spec() // one per write of a round, as Upsert makes
					}
					raw, err := PrepareFile(tc.docs[i%len(tc.docs)], "archive")
					if err != nil {
						b.Fatal(err)
					}
					if path == "raw" {
						if _, ok := prepareRaw(raw, spec, tableSorts); !ok {
							b.Fatal("prepareRaw declined a plain document")
						}
					} else {
						d, problem := parseDoc(0, raw, true)
						if problem != "" {
							b.Fatal(problem)
						}
						if _, err := prepareUpserts([]parsedDoc{d}, spec, tableSorts); err != nil {
							b.Fatal(err)
						}
					}
					i++
				}
			})
		}
	}
}

// libraryDocs are hopDocs' documents with the names of a library: format makes each path
// from a directory number and the file's.
func libraryDocs(n int, format string) []json.RawMessage {
	docs := make([]json.RawMessage, n)
	for i := range docs {
		rel := fmt.Sprintf(format, i%100, i)
		d := map[string]any{"id": fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15), "paths": map[string]float64{rel: 1795745275.5},
			"paths_list": []string{rel}, "type": "audio/flac", "size": 9, "mtime": 1795745275.5, "next": "m1",
			"has_archive_paths": false, "offline": false, "copies": 1, "version": 1}
		raw, err := json.Marshal(d)
		if err != nil {
			panic(err)
		}
		docs[i] = raw
	}
	return docs
}

// BenchmarkPrepareChunk: the same for a chunk of module text as the outbox marshals it
// (chunkDocs): path=raw is PrepareMarshaled's (prepareRaw), path=decoded what PrepareUpsert
// does for a document it must check (parseDoc, then the facets and text).
func BenchmarkPrepareChunk(b *testing.B) {
	docs := chunkDocs(100)
	spec := ChunkSettings.spec()
	for _, path := range []string{"raw", "decoded"} {
		b.Run("path="+path, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				raw := docs[i%len(docs)]
				if path == "raw" {
					if _, ok := prepareRaw(raw, spec, ChunkSettings.Sortable); !ok {
						b.Fatal("prepareRaw declined a chunk")
					}
				} else {
					d, problem := parseDoc(0, raw, false)
					if problem != "" {
						b.Fatal(problem)
					}
					if _, err := prepareParsed(d, spec, ChunkSettings.Sortable); err != nil {
						b.Fatal(err)
					}
				}
				i++
			}
		})
	}
}
