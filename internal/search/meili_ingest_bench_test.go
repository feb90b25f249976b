package search

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/meilitest"
)

// BenchmarkMeiliIngest measures how fast Meilisearch takes the SearchFiles benchmark's files
// and chunks, per step of 100k chunks, so a slowdown as the index grows shows, in wall time
// and in the server's CPU time (which the shared machine's load does not inflate). Sizes:
// SEARCH_BENCH_FILES (100k), SEARCH_BENCH_MEILI_INGEST_CHUNKS (200k); chunks per Upsert:
// SEARCH_BENCH_MEILI_UPSERT (10k); server flags: SEARCH_BENCH_MEILI_FLAGS (default
// "--max-indexing-threads 1"); SEARCH_BENCH_MEILI_TRACE=1 logs Meilisearch's account of its
// last batch after each step (where the time went, database sizes).
//
//	go test -run '^$' -bench MeiliIngest -benchtime 1x ./internal/search/
func BenchmarkMeiliIngest(b *testing.B) {
	nFiles := envInt("SEARCH_BENCH_FILES", 100_000)
	nChunks := envInt("SEARCH_BENCH_MEILI_INGEST_CHUNKS", 200_000)
	files, chunks, _ := benchFileFixture(nFiles, nChunks)
	ctx := context.Background()
	for b.Loop() {
		flags := meiliBenchFlags
		if f, ok := os.LookupEnv("SEARCH_BENCH_MEILI_FLAGS"); ok {
			flags = strings.Fields(f)
		}
		srv := meilitest.Start(b, flags...)
		mix, err := OpenMeilisearch(ctx, MeiliConfig{Host: srv.URL, APIKey: srv.MasterKey, Timeout: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		ix := WithFileDocuments(mix, "archive")
		start, cpu0 := time.Now(), cpuTime(b, srv.PID())
		if err := loadBench(ctx, ix, files, nil, meiliBenchFiles, 1); err != nil { // the files, as SearchFiles loads them
			b.Fatal(err)
		}
		b.Logf("%d files in %s, Meilisearch CPU %s", len(files), time.Since(start).Round(time.Millisecond), (cpuTime(b, srv.PID()) - cpu0).Round(time.Millisecond))
		total, totalCPU := time.Now(), cpuTime(b, srv.PID())
		for i, step := range slices.Collect(slices.Chunk(chunks, 100_000)) {
			t0, cpu0 := time.Now(), cpuTime(b, srv.PID())
			for batch := range slices.Chunk(step, envInt("SEARCH_BENCH_MEILI_UPSERT", 10_000)) {
				if err := ix.Chunks().Upsert(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			d, cpu := time.Since(t0), cpuTime(b, srv.PID())-cpu0
			b.Logf("chunks %d-%d: %s (%.0f chunks/s), Meilisearch CPU %s (%.0f chunks per CPU second)", i*100_000, i*100_000+len(step),
				d.Round(time.Millisecond), float64(len(step))/d.Seconds(), cpu.Round(time.Millisecond), float64(len(step))/cpu.Seconds())
			if os.Getenv("SEARCH_BENCH_MEILI_TRACE") != "" {
				logLastBatch(b, srv)
			}
		}
		d, cpu := time.Since(total), cpuTime(b, srv.PID())-totalCPU
		b.ReportMetric(float64(len(chunks))/d.Seconds(), "chunks/s")
		b.ReportMetric(float64(len(chunks))/cpu.Seconds(), "chunks/cpu-s")
		mix.Close()
		srv.Stop()
	}
}

// logLastBatch logs Meilisearch's description of its last batch: how many tasks and
// documents it took and where the time went (progressTrace).
func logLastBatch(b *testing.B, srv *meilitest.Server) {
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/batches?limit=1", nil)
	req.Header.Set("Authorization", "Bearer "+srv.MasterKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	b.Logf("last batch: %s", body)
}

// cpuTime is the user plus system CPU time a process has used, from /proc/<pid>/stat
// (in clock ticks of 10 ms: the kernel's USER_HZ is 100 on Linux).
func cpuTime(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
