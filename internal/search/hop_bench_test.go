package search

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/proccpu"
)

// hopSettings are the files index settings of a daemon with one module: the core attributes
// (internal/app's coreFilterable and coreSortable) plus the derived ones.
var hopSettings = FileSettings(Settings{
	Filterable: []string{"id", "next", "type", "size", "mtime", "copies", "paths_list", "has_archive_paths", "offline"},
	Sortable:   []string{"mtime", "size", "copies"},
})

// hopDocs returns n metadata documents as the outbox renders them, before (next "m1") or
// after (next "", the module's field merged) one module hop.
func hopDocs(n int, after bool) []json.RawMessage {
	docs := make([]json.RawMessage, n)
	for i := range docs {
		rel := fmt.Sprintf("d%02d/f%05d.txt", i%100, i)
		mtime := 1795745275.9935 + float64(i)/100
		d := map[string]any{"id": fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15), "paths": map[string]float64{rel: mtime},
			"paths_list": []string{rel}, "type": "text/plain", "size": 9, "mtime": mtime, "next": "m1",
			"has_archive_paths": false, "offline": false, "copies": 1, "version": 1}
		if after {
			d["next"], d["noop"] = "", true
		}
		raw, err := json.Marshal(d)
		if err != nil {
			panic(err)
		}
		docs[i] = raw
	}
	return docs
}

// BenchmarkEmbeddedHop: the files index write of one module hop (the outbox's upsert of a
// document whose next moved and that gained the module's field), in rounds of 250 as the
// outbox sends them, over an index of hopN documents.
func BenchmarkEmbeddedHop(b *testing.B) {
	const hopN = 5000
	round := envInt("HOP_ROUND", 250) // documents per upsert
	ctx := context.Background()
	before, after := hopDocs(hopN, false), hopDocs(hopN, true)
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		ix, files := openHopIndex(b)
		for chunk := range slices.Chunk(before, 1000) {
			if err := files.Upsert(ctx, chunk); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		cpu0 := proccpu.Used()
		for chunk := range slices.Chunk(after, round) {
			if err := files.Upsert(ctx, chunk); err != nil {
				b.Fatal(err)
			}
		}
		cpu += proccpu.Used() - cpu0
		b.StopTimer()
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/hopN*1e6, "µs/hop")
	// CPU time is steadier than wall time on a shared machine.
	b.ReportMetric(cpu.Seconds()/float64(b.N)/hopN*1e6, "cpu-µs/hop")
}

// openHopIndex opens an embedded index in a temporary directory, its files collection set up
// as a daemon with one module has it (hopSettings, documents through PrepareFile).
func openHopIndex(b *testing.B) (Index, Collection) {
	b.Helper()
	ix, err := OpenEmbedded(filepath.Join(b.TempDir(), "index.db"))
	if err != nil {
		b.Fatal(err)
	}
	files := WithFileDocuments(ix, "archive").Files()
	if err := files.Configure(b.Context(), hopSettings); err != nil {
		b.Fatal(err)
	}
	return ix, files
}
