package search

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/meilitest"
)

// BenchmarkSearchFiles measures SearchFiles (snippets and facets included) over 100k files
// and 1M chunks on the embedded backend, with its file table ("embedded") and without it
// ("embedded_sql", the same database read by SQL alone), and on Meilisearch (one indexing
// thread, as the embedded backend has one writer) over the same documents, in the same run.
// Sizes: SEARCH_BENCH_FILES, SEARCH_BENCH_CHUNKS.
//
//	go test -run '^$' -bench SearchFiles -benchtime 100x -timeout 3h ./internal/search/
func BenchmarkSearchFiles(b *testing.B) {
	nFiles := envInt("SEARCH_BENCH_FILES", 100_000)
	nChunks := envInt("SEARCH_BENCH_CHUNKS", 1_000_000)
	files, chunks, words := benchFileFixture(nFiles, nChunks)
	ctx := context.Background()

	start := time.Now()
	dbPath := filepath.Join(b.TempDir(), "index.db")
	emb, err := OpenEmbedded(dbPath)
	if err != nil {
		b.Fatal(err)
	}
	defer emb.Close()
	if err := loadBench(ctx, WithFileDocuments(emb, "archive"), files, chunks, 5000, 10_000); err != nil {
		b.Fatal(err)
	}
	b.Logf("embedded: %d files and %d chunks indexed in %s", len(files), len(chunks), time.Since(start).Round(time.Second))
	// The file table is built once, in the background, after the first search of a process
	// (or kept up to date by the writes once built): build it before measuring.
	start = time.Now()
	if err := emb.(*embeddedIndex).buildTable(ctx, DefaultFacets); err != nil {
		b.Fatal(err)
	}
	b.Logf("embedded: file table built in %s", time.Since(start).Round(time.Millisecond))
	sqlOnly, err := OpenEmbedded(dbPath)
	if err != nil {
		b.Fatal(err)
	}
	defer sqlOnly.Close()
	sqlOnly.(*embeddedIndex).tableOff = true

	srv := meilitest.Start(b, meiliBenchFlags...)
	start, cpu0 := time.Now(), cpuTime(b, srv.PID())
	mix, err := OpenMeilisearch(ctx, MeiliConfig{Host: srv.URL, APIKey: srv.MasterKey, Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	defer mix.Close()
	if err := loadBench(ctx, WithFileDocuments(mix, "archive"), files, chunks, meiliBenchFiles, meiliBenchChunks); err != nil {
		b.Fatal(err)
	}
	if n, err := mix.Chunks().Count(ctx); err != nil || n != int64(len(chunks)) {
		b.Fatalf("meilisearch holds %d chunks (%v), want %d", n, err, len(chunks))
	}
	b.Logf("meilisearch (%s): %d files and %d chunks indexed in %s (its CPU time %s)", strings.Join(meiliBenchFlags, " "),
		len(files), len(chunks), time.Since(start).Round(time.Second), (cpuTime(b, srv.PID()) - cpu0).Round(time.Second))

	queries := []struct {
		name string
		q    func(r *rand.Rand) FileQuery
	}{
		{"one_word", func(r *rand.Rand) FileQuery {
			return FileQuery{Q: words[r.IntN(len(words))], Facets: DefaultFacets, Snippets: 3}
		}},
		{"two_words", func(r *rand.Rand) FileQuery {
			// Two words of one chunk, so the query has hits.
			c := chunks[r.IntN(len(chunks))]
			var d struct{ Text string }
			_ = json.Unmarshal(c, &d)
			w := strings.Fields(d.Text)
			return FileQuery{Q: w[0] + " " + w[len(w)-1], Facets: DefaultFacets, Snippets: 3}
		}},
		{"word_filter_sort", func(r *rand.Rand) FileQuery {
			return FileQuery{Q: words[r.IntN(len(words))], Filters: []string{"kind = image"}, Sort: "newest", Facets: DefaultFacets, Snippets: 3}
		}},
		{"word_filter_largest", func(r *rand.Rand) FileQuery {
			return FileQuery{Q: words[r.IntN(len(words))], Filters: []string{"drive = local"}, Sort: "largest", Facets: DefaultFacets, Snippets: 3}
		}},
		{"browse_facet", func(r *rand.Rand) FileQuery {
			return FileQuery{Filters: []string{fmt.Sprintf("year = %d", 2000+r.IntN(25))}, Facets: DefaultFacets}
		}},
	}
	for _, backend := range []struct {
		name string
		ix   Index
	}{{"embedded", WithFileDocuments(emb, "archive")}, {"embedded_sql", WithFileDocuments(sqlOnly, "archive")},
		{"meilisearch", WithFileDocuments(mix, "archive")}} {
		for _, qc := range queries {
			b.Run(backend.name+"/"+qc.name, func(b *testing.B) {
				r := rand.New(rand.NewPCG(5, 6))
				var lat []time.Duration
				for b.Loop() {
					q := qc.q(r)
					t0 := time.Now()
					if _, err := SearchFiles(ctx, backend.ix, q); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
				}
				reportPercentiles(b, lat)
			})
		}
	}
}

// meiliBenchFlags are the Meilisearch flags of the benchmarks: one indexing thread, so ingest
// figures do not depend on how many of the shared machine's cores happen to be free.
var meiliBenchFlags = []string{"--max-indexing-threads", "1"}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// Meilisearch is written in large batches: it indexes every task enqueued while it is busy as
// one batch, and much of a batch's cost does not grow with its size (post-processing the
// prefix, facet and word databases, the commit), so 50k-100k chunks per Upsert take 1.7 times
// less of its CPU than 10k (BenchmarkMeiliIngest). The embedded backend keeps the sizes of
// earlier runs, so its figures stay comparable. (The daemon's outbox writes a round of up to
// 1000 keys at a time.)
const meiliBenchFiles, meiliBenchChunks = 50_000, 100_000

// loadBench configures both collections and writes files and chunks, filesPer and chunksPer
// documents per Upsert.
func loadBench(ctx context.Context, ix Index, files, chunks []json.RawMessage, filesPer, chunksPer int) error {
	if err := ix.Files().Configure(ctx, FileSettings(Settings{
		Filterable: []string{"type", "size", "mtime", "offline", "copies"}, Sortable: []string{"mtime", "size"}})); err != nil {
		return err
	}
	if err := ix.Chunks().Configure(ctx, ChunkSettings); err != nil {
		return err
	}
	for batch := range slices.Chunk(files, filesPer) {
		if err := ix.Files().Upsert(ctx, batch); err != nil {
			return err
		}
	}
	for batch := range slices.Chunk(chunks, chunksPer) {
		if err := ix.Chunks().Upsert(ctx, batch); err != nil {
			return err
		}
	}
	return nil
}

// benchFileFixture makes n metadata documents (a quarter photos with a date taken and a
// camera, some on archive drives) and m chunks of 30 words spread over them.
func benchFileFixture(n, m int) (files, chunks []json.RawMessage, words []string) {
	r := rand.New(rand.NewPCG(11, 12))
	words = benchVocabulary()
	exts := []string{"jpg", "pdf", "txt", "mp3", "mp4", "docx", "png", "bin"}
	types := []string{"image/jpeg", "application/pdf", "text/plain", "audio/mpeg", "video/mp4",
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "image/png", "application/octet-stream"}
	cameras := []string{"Canon EOS 5D", "Nikon D3", "Pixel 7", "iPhone 12", "Fujifilm X-T3"}
	ids := make([]string, n)
	for i := range n {
		k := r.IntN(len(exts))
		dir := fmt.Sprintf("folder%d", i%500)
		if i%5 == 0 {
			dir = fmt.Sprintf("archive/usb%d/%s", i%3, dir)
		}
		p := fmt.Sprintf("%s/%s_%06d.%s", dir, words[r.IntN(len(words))], i, exts[k])
		mtime := float64(946684800 + r.IntN(25*365*86400))
		ids[i] = fmt.Sprintf("%016x", r.Uint64())
		d := map[string]any{"id": ids[i], "paths": map[string]float64{p: mtime}, "mtime": mtime,
			"size": r.IntN(50_000_000), "type": types[k], "next": "", "paths_list": []string{p},
			"copies": 1, "version": 1, "has_archive_paths": i%5 == 0, "offline": i%15 == 0}
		if k == 0 {
			d["media"] = map[string]any{"date_unix": mtime - float64(r.IntN(86400*30)), "camera": cameras[r.IntN(len(cameras))]}
		}
		raw, _ := json.Marshal(d)
		files = append(files, raw)
	}
	for j := range m {
		f := j % n
		seg := j / n
		w := make([]string, 30)
		for i := range w {
			w[i] = words[r.IntN(len(words))]
		}
		raw, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("text_%s_%d", ids[f], seg), "file_id": ids[f], "module": "text",
			"text": strings.Join(w, " "), "index": seg, "segment": seg, "page": seg + 1})
		chunks = append(chunks, raw)
	}
	return files, chunks, words
}
