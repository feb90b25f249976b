package app

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/dispatch"
	"github.com/homeindex/homeindex/internal/gcfloor"
	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
	"github.com/homeindex/homeindex/sdk"
)

// BenchmarkPipelineEndToEnd10k: 10k files through one no-op raw-protocol worker, from dispatch
// to document.json written (check → run → done → merge → outbox). Compare with
// BenchmarkPipelineBare10k, the same worker process with no daemon (the limit the ratio is measured against).
func BenchmarkPipelineEndToEnd10k(b *testing.B) {
	var ws workerStats
	benchPipeline(b, 10_000, func(p *pipelineEnv) func(context.Context) {
		stop := startWorkerProcess(b, p.redis.Addr())
		return func(ctx context.Context) {
			<-ctx.Done()
			ws.add(stop())
		}
	})
	ws.report(b)
}

// BenchmarkPipelineEndToEndSDK10k: the same run with no-op modules on the Go SDK, 1 and 4
// workers (goal: ≥ 80% of the raw-protocol worker's files/s).
func BenchmarkPipelineEndToEndSDK10k(b *testing.B) {
	for _, workers := range []int{1, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			benchPipeline(b, 10_000, func(p *pipelineEnv) func(context.Context) {
				return func(ctx context.Context) {
					var wg sync.WaitGroup
					for i := 0; i < workers; i++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							cfg, err := sdk.LoadConfig(func(k string) string {
								return map[string]string{"MODULE_NAME": "m1", "MODULE_UID": "1", "REDIS_HOST": p.redis.Addr(),
									"METADATA_DIRECTORY": p.meta, "FILES_DIRECTORY": p.root, "LOGGING_LEVEL": "error"}[k]
							})
							if err != nil {
								b.Error(err)
								return
							}
							cfg.Log = io.Discard
							w, err := sdk.NewWorker(cfg, sdk.HandlerFuncs{RunFunc: func(context.Context, *sdk.Job) (sdk.Result, error) {
								return sdk.Result{Document: map[string]any{"noop": true}}, nil
							}})
							if err != nil {
								b.Error(err)
								return
							}
							_ = w.Serve(ctx)
						}()
					}
					wg.Wait()
				}
			})
		})
	}
}

// benchPipeline times n files through module m1 served by serve, from the first dispatch to
// the last document written.
func benchPipeline(b *testing.B, n int, worker func(p *pipelineEnv) func(context.Context)) {
	// The daemon's garbage collector runs as in homeindexd (cmd/homeindexd's main). In-process
	// SDK workers share it; a module process of its own keeps GOGC's default.
	defer gcfloor.Start(gcfloor.DaemonHeadroom).Stop()
	var cpu cpuMeter
	for b.Loop() {
		b.StopTimer()
		p := &pipelineEnv{testEnv: benchTestEnv(b, n), redis: redistest.Start(b)}
		p.vars["REDIS_HOST"] = p.redis.Addr()
		p.vars["MODULES"] = modulesYAML("m1")
		p.vars["DISPATCH_WINDOW"] = cmp.Or(os.Getenv("BENCH_WINDOW"), "256")
		p.open()
		if _, err := p.app.SyncOnce(p.ctx, "bench"); err != nil {
			b.Fatal(err)
		}
		if _, err := p.app.Outbox.Drain(p.ctx); err != nil {
			b.Fatal(err)
		}
		serve := worker(p)
		b.StartTimer()
		cpu.start(p.ctx, p.redis.Client())
		stopProfile := profileTimed(b)
		p.startB(b)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); serve(ctx) }()
		waitFor(b, 10*time.Minute, "every file through the pipeline", p.allDone)
		b.StopTimer()
		stopProfile()
		cpu.stop(p.ctx, p.redis.Client())
		cancel()
		wg.Wait()
		p.stop()
		p.close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "files/s")
	cpu.report(b)
}

// profileTimed writes a CPU profile of the timed part alone to $PIPELINE_CPUPROFILE when set
// (go test's -cpuprofile also covers building the tree and the initial sync).
func profileTimed(b *testing.B) (stop func()) {
	stopHeap := heapTimed(b)
	path := os.Getenv("PIPELINE_CPUPROFILE")
	if path == "" {
		return stopHeap
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); f.Close(); stopHeap() }
}

// heapTimed writes heap profiles to $PIPELINE_MEMPROFILE.base and $PIPELINE_MEMPROFILE at the
// start and the end of the timed part, when set: the allocations of the timed part alone are
// go tool pprof -sample_index=alloc_space -base $PIPELINE_MEMPROFILE.base $PIPELINE_MEMPROFILE.
func heapTimed(b *testing.B) (stop func()) {
	path := os.Getenv("PIPELINE_MEMPROFILE")
	if path == "" {
		return func() {}
	}
	write := func(p string) {
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
	}
	write(path + ".base")
	return func() { write(path) }
}

// benchTestEnv is a testEnv over a fresh tree of n tiny files.
func benchTestEnv(b *testing.B, n int) *testEnv {
	base := pipelineScratch(b)
	root := filepath.Join(base, "files")
	for i := 0; i < n; i++ {
		p := filepath.Join(root, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%05d.txt", i))
		if i < 100 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprint("file ", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return &testEnv{t: b, ctx: context.Background(), root: root, meta: filepath.Join(base, "metadata"), state: filepath.Join(base, "state"),
		vars: map[string]string{"INDEX_DIRECTORY": root, "METADATA_DIRECTORY": filepath.Join(base, "metadata"),
			"STATE_DIRECTORY": filepath.Join(base, "state"), "LOG_FORMAT": "json", "LOGGING_LEVEL": "warn",
			"SETTLE_TIME": "0"}} // files are written just before the sync
}

// pipelineScratch is a new directory for one pipeline run's files, metadata and state. With
// BENCH_SCRATCH set (scripts/bench.sh sets it) it is made there and left for the script to
// remove when every benchmark has run: on ext4 without a journal, as some VMs' root is, each
// new inode steps over every inode deleted in the minutes before (the kernel's
// recently_deleted check), so deleting one run's ~50k files would slow the next run's mkdir
// and create several times over, whichever code it measures. Without it, b.TempDir.
func pipelineScratch(b *testing.B) string {
	dir := os.Getenv("BENCH_SCRATCH")
	if dir == "" {
		return b.TempDir()
	}
	base, err := os.MkdirTemp(dir, "pipeline-")
	if err != nil {
		b.Fatal(err)
	}
	return base
}

// startB is start for benchmarks (no Cleanup registration).
func (p *pipelineEnv) startB(b *testing.B) {
	p.pipe = p.app.NewPipeline(nil)
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.done = make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = p.app.Outbox.Run(ctx) }()
	go func() { defer wg.Done(); _ = p.pipe.Run(ctx) }()
	go func() { wg.Wait(); close(p.done) }()
	<-p.pipe.Ready()
}

// BenchmarkDispatcherRefill200k: one refill of a 64-job window with 200k documents waiting in
// the catalog (goal < 5 ms: a refill is O(window), not O(collection)).
func BenchmarkDispatcherRefill200k(b *testing.B) {
	const n = 200_000
	dir := b.TempDir()
	cat, err := catalog.Open(filepath.Join(dir, "catalog.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	ctx := context.Background()
	for i := 0; i < n; i += 5000 {
		err := cat.Update(ctx, func(t *catalog.Tx) error {
			for j := i; j < i+5000; j++ {
				id := fmt.Sprintf("%016x", j)
				if _, err := t.InsertDocument(ctx, catalog.DocRow{ID: id, Type: "text/plain", Size: 1, Next: "m1", Version: 1}); err != nil {
					return err
				}
				if err := t.PutFile(ctx, catalog.File{Path: fmt.Sprintf("d%03d/f%06d", j/1000, j), DocID: id, Dev: 1, Ino: uint64(j + 1), Size: 1, MtimeNs: 1, Mtime: 1}); err != nil {
					return err
				}
				if err := t.Dirty(ctx, catalog.DocKey(id)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	srv := redistest.Start(b)
	q, err := queue.Connect(ctx, queue.Options{Endpoint: redisconn.Endpoint{Addr: srv.Addr()}}, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	d := dispatch.New(dispatch.Config{Modules: []dispatch.Module{{Name: "m1", UID: "1", Window: 64}}}, cat, q, zerolog.Nop())
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		srv.Flush()
		if _, err := cat.DeleteQueuedJobs(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := d.RefillAll(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if got, _ := q.InFlight(ctx, "m1"); got != 64 {
		b.Fatalf("window holds %d, want 64", got)
	}
}

// BenchmarkPipelineBare10k is the physical limit BenchmarkPipelineEndToEnd10k is measured
// against: the same raw-protocol worker (same Redis calls, same JSON work) serving 10k items
// queued at once when the clock starts, while a bare loop drains
// modules:done. No daemon: the worker never waits for a dispatch, and nothing merges. The
// end-to-end figure divided by this one is the share of the worker's capacity the daemon feeds.
func BenchmarkPipelineBare10k(b *testing.B) {
	const n = 10_000
	var cpu cpuMeter
	var ws workerStats
	for b.Loop() {
		b.StopTimer()
		srv := redistest.Start(b)
		rdb := srv.Client()
		ctx := context.Background()
		items := make([]any, n)
		for i := range items {
			id := fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15)
			items[i] = `{"id":"` + id + `","paths":{"d` + fmt.Sprintf("%02d/f%05d", i%100, i) + `.txt":1767225600.5},` +
				`"mtime":1767225600.5,"size":10,"type":"text/plain","next":"m1","version":1,` +
				`"uid":"1","attempt":1,"token":"` + protocol.NewToken() + `"}`
		}
		stop := startWorkerProcess(b, srv.Addr())
		b.StartTimer()
		cpu.start(ctx, rdb)
		for i := 0; i < n; i += 1000 { // all queued at once: about 20 ms
			if err := rdb.RPush(ctx, protocol.CheckKey("m1"), items[i:i+1000]...).Err(); err != nil {
				b.Fatal(err)
			}
		}
		for got := 0; got < n; {
			kv, err := rdb.BLPop(ctx, 10*time.Second, protocol.DoneKey).Result()
			if err != nil {
				b.Fatalf("after %d results: %v", got, err)
			}
			got += len(kv) / 2
		}
		b.StopTimer()
		cpu.stop(ctx, rdb)
		ws.add(stop())
		b.StartTimer()
	}
	b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "files/s")
	cpu.report(b)
	ws.report(b)
}
