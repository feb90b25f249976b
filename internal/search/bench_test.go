package search

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// Benchmarks of the embedded backend over 100k Home-Index-like documents. The search
// benchmarks share one fixture built once per run (about 10 s). Run them with
//
//	go test -run '^$' -bench EmbeddedSearch -benchtime 1000x ./internal/search/
//	go test -run '^$' -bench EmbeddedIngest -benchtime 1x ./internal/search/
//
// (an iteration count given to -bench . would also apply to the 10-second ingest).

const benchDocs = 100_000

var benchSettings = Settings{
	Filterable: []string{"type", "size", "mtime", "next", "has_archive_paths", "offline", "paths_list", "copies"},
	Sortable:   []string{"mtime", "size"},
}

var benchTypes = []string{"text/plain", "image/jpeg", "image/png", "application/pdf", "video/mp4",
	"audio/mpeg", "application/zip", "text/html"}

// benchVocabulary is 5000 pseudo-words; each document's text has four of them, so a word
// occurs in about 80 documents.
var benchVocabulary = sync.OnceValue(func() []string {
	r := rand.New(rand.NewPCG(7, 7))
	words := make([]string, 5000)
	for i := range words {
		b := make([]byte, 4+r.IntN(6))
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		words[i] = fmt.Sprintf("%s%d", b, i) // the suffix keeps words distinct
	}
	return words
})

// benchDocuments generates the documents once per run.
var benchDocuments = sync.OnceValue(func() []json.RawMessage {
	r := rand.New(rand.NewPCG(1, 2))
	words := benchVocabulary()
	nexts := []string{"", "", "", "text-module", "thumb-module"}
	docs := make([]json.RawMessage, benchDocs)
	for i := range docs {
		path := fmt.Sprintf("photos/%d/album%d/IMG_%05d.dat", 2000+i%25, i%300, i)
		mtime := 1.6e9 + float64(r.IntN(100_000_000)) + float64(r.IntN(10000))/1e4
		d := map[string]any{
			"id":                fmt.Sprintf("%016x", r.Uint64()),
			"paths":             map[string]float64{path: mtime},
			"paths_list":        []string{path},
			"type":              benchTypes[r.IntN(len(benchTypes))],
			"size":              r.IntN(20_000),
			"mtime":             mtime,
			"next":              nexts[r.IntN(len(nexts))],
			"has_archive_paths": r.IntN(3) == 0,
			"offline":           r.IntN(10) == 0,
			"copies":            1 + r.IntN(3),
			"version":           1,
			"read": map[string]any{"text": fmt.Sprintf("%s %s %s %s",
				words[r.IntN(len(words))], words[r.IntN(len(words))], words[r.IntN(len(words))], words[r.IntN(len(words))])},
		}
		raw, err := json.Marshal(d)
		if err != nil {
			panic(err)
		}
		docs[i] = raw
	}
	return docs
})

// ingest configures c and writes the documents in batches of batch.
func ingest(ctx context.Context, c Collection, docs []json.RawMessage, batch int) error {
	if err := c.Configure(ctx, benchSettings); err != nil {
		return err
	}
	for chunk := range slices.Chunk(docs, batch) {
		if err := c.Upsert(ctx, chunk); err != nil {
			return err
		}
	}
	return nil
}

func BenchmarkEmbeddedIngest100k(b *testing.B) {
	docs := benchDocuments()
	for _, batch := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				ix, err := OpenEmbedded(filepath.Join(b.TempDir(), "index.db"))
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := ingest(b.Context(), ix.Files(), docs, batch); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := ix.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(len(docs))*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}

// benchFixture is the 100k-document index the search benchmarks share, built on first use.
var benchFixture struct {
	once sync.Once
	dir  string
	ix   Index
	err  error
}

func benchIndex(b *testing.B) Index {
	b.Helper()
	benchFixture.once.Do(func() {
		benchFixture.dir, benchFixture.err = os.MkdirTemp("", "search-bench-")
		if benchFixture.err != nil {
			return
		}
		benchFixture.ix, benchFixture.err = OpenEmbedded(filepath.Join(benchFixture.dir, "index.db"))
		if benchFixture.err != nil {
			return
		}
		benchFixture.err = ingest(context.Background(), benchFixture.ix.Files(), benchDocuments(), 5000)
	})
	if benchFixture.err != nil {
		b.Fatalf("build the benchmark fixture: %v", benchFixture.err)
	}
	return benchFixture.ix
}

// TestMain removes the benchmark fixture after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchFixture.ix != nil {
		benchFixture.ix.Close()
	}
	if benchFixture.dir != "" {
		os.RemoveAll(benchFixture.dir)
	}
	os.Exit(code)
}

func BenchmarkEmbeddedSearch(b *testing.B) {
	c := benchIndex(b).Files()
	words := benchVocabulary()
	cases := []struct {
		name  string
		query func(r *rand.Rand) Query
	}{
		{"word", func(r *rand.Rand) Query {
			return Query{Q: words[r.IntN(len(words))], Limit: 20}
		}},
		{"prefix", func(r *rand.Rand) Query {
			w := words[r.IntN(len(words))]
			return Query{Q: w[:4], Limit: 20}
		}},
		{"filter_sort", func(r *rand.Rand) Query {
			return Query{Filter: fmt.Sprintf(`type = %q AND size > 5000`, benchTypes[r.IntN(len(benchTypes))]),
				Sort: []string{"mtime:desc"}, Limit: 20}
		}},
		{"word_filter_sort", func(r *rand.Rand) Query {
			return Query{Q: words[r.IntN(len(words))], Filter: `has_archive_paths = false AND next = ""`,
				Sort: []string{"mtime:desc"}, Limit: 20}
		}},
		{"selective_filter_sort", func(r *rand.Rand) Query {
			lo := r.IntN(19_900)
			return Query{Filter: fmt.Sprintf(`size %d TO %d AND offline = false`, lo, lo+10),
				Sort: []string{"mtime:asc"}, Limit: 20}
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 4))
			var lat []time.Duration
			for b.Loop() {
				q := tc.query(r)
				start := time.Now()
				if _, err := c.Search(b.Context(), q); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
