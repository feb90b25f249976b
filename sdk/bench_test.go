package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// BenchmarkSDKNoop measures no-op module throughput (check true, run returns nothing) in
// files/s: b.N items built as the daemon builds them wait in <m>:check, 1 or 4 workers serve
// them, and the benchmark pops modules:done until every file is answered. "sdk" runs Workers;
// "raw" runs the upstream runtime's Redis calls in a bare loop (internal/queue's
// BenchmarkPipeline10k worker): LPOP, MULTI ZADD+RPUSH, ZSCORE, ZREM, LREM, RPUSH, BLPOP, ...
// The goal is sdk at >= 80% of raw.
func BenchmarkSDKNoop(b *testing.B) {
	for _, workers := range []int{1, 4} {
		b.Run(fmt.Sprintf("sdk/workers=%d", workers), func(b *testing.B) { benchNoop(b, workers, sdkWorkers) })
		b.Run(fmt.Sprintf("raw/workers=%d", workers), func(b *testing.B) { benchNoop(b, workers, rawWorkers) })
	}
}

// startWorkers starts n workers on module m and returns a function that stops them.
type startWorkers func(b *testing.B, srv *redistest.Server, dir string, n int) (stop func())

func benchNoop(b *testing.B, workers int, start startWorkers) {
	srv := redistest.Start(b)
	rdb, ctx := srv.Client(), context.Background()
	const batch = 1000
	for i := 0; i < b.N; i += batch {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j := i; j < min(i+batch, b.N); j++ {
				id := fmt.Sprintf("%016x", j)
				doc := `{"id":"` + id + `","paths":{"a/` + id + `.jpg":1.5},"mtime":1.5,"size":1000,"type":"image/jpeg","next":"m","paths_list":["a/` + id + `.jpg"],"copies":1,"version":1,"has_archive_paths":false,"offline":false}`
				item, err := protocol.BuildItem(id, []byte(doc), "u", protocol.Job{Token: protocol.NewToken(), Attempt: 1, Since: 1})
				if err != nil {
					return err
				}
				p.RPush(ctx, "m:check", item)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	begin := time.Now()
	stop := start(b, srv, benchDir(b), workers)
	for done := 0; done < b.N; {
		if _, err := rdb.Do(ctx, "BLPOP", protocol.DoneKey, "5").Result(); err != nil {
			b.Fatalf("after %d of %d files: %v", done, b.N, err)
		}
		done++
	}
	elapsed := time.Since(begin)
	b.StopTimer()
	stop()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "files/s")
}

func sdkWorkers(b *testing.B, srv *redistest.Server, dir string, n int) func() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	noop := HandlerFuncs{RunFunc: func(context.Context, *Job) (Result, error) { return Result{}, nil }}
	for i := range n {
		w, err := NewWorker(Config{
			Module: "m", UID: "u", Redis: redisconn.Endpoint{Addr: srv.Addr()}, Timeout: time.Minute,
			MetadataDir: dir, FilesDir: dir, WorkerID: fmt.Sprint(i), Log: io.Discard, LogLevel: zerolog.InfoLevel,
		}, noop)
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			if err := w.Serve(ctx); err != nil {
				b.Error(err)
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

func rawWorkers(b *testing.B, srv *redistest.Server, _ string, n int) func() {
	var wg sync.WaitGroup
	for range n {
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
		wg.Go(func() {
			defer rdb.Close()
			if err := rawLoop(context.Background(), rdb, "m"); err != nil {
				b.Error(err)
			}
		})
	}
	return wg.Wait
}

// rawLoop is upstream's process_check then process_run for one no-op module, until :check is
// empty (each pass pushes one run item and pops one, so :run drains too).
func rawLoop(ctx context.Context, rdb *redis.Client, m string) error {
	check, run := protocol.CheckKey(m), protocol.RunKey(m)
	for {
		item, err := rdb.LPop(ctx, check).Result()
		if errors.Is(err, redis.Nil) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := rawTake(ctx, rdb, check, item); err != nil {
			return err
		}
		if err := rawRelease(ctx, rdb, check, item); err != nil {
			return err
		}
		if err := rdb.RPush(ctx, run, item).Err(); err != nil {
			return err
		}
		kv, err := rdb.BLPop(ctx, 5*time.Second, run).Result()
		if err != nil {
			return err
		}
		if err := rawTake(ctx, rdb, run, kv[1]); err != nil {
			return err
		}
		if err := rawRelease(ctx, rdb, run, kv[1]); err != nil {
			return err
		}
		if err := rdb.RPush(ctx, protocol.DoneKey, `{"module": "m", "document": `+kv[1]+`}`).Err(); err != nil {
			return err
		}
	}
}

// rawTake is the Python runtime's add_timeout; rawRelease its remove_timeout (docs/protocol.md).
func rawTake(ctx context.Context, rdb *redis.Client, q, item string) error {
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, protocol.TimeoutsKey, redis.Z{Score: float64(time.Now().Unix() + 60), Member: protocol.TimeoutMember(q, item)})
		p.RPush(ctx, q+":processing", item)
		return nil
	})
	return err
}

func rawRelease(ctx context.Context, rdb *redis.Client, q, item string) error {
	member := protocol.TimeoutMember(q, item)
	if err := rdb.ZScore(ctx, protocol.TimeoutsKey, member).Err(); err != nil {
		return err
	}
	if err := rdb.ZRem(ctx, protocol.TimeoutsKey, member).Err(); err != nil {
		return err
	}
	return rdb.LRem(ctx, q+":processing", 0, item).Err()
}

// benchDir is where the workers' metadata goes: $BENCH_METADATA_DIR, else a directory on
// /dev/shm when there is one (the benchmark measures the protocol path; a metadata directory
// on a journaled disk adds a mkdir and a file creation per file, about 1 ms on the CI VM),
// else the test's temporary directory.
func benchDir(b *testing.B) string {
	base := os.Getenv("BENCH_METADATA_DIR")
	if base == "" {
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			base = "/dev/shm"
		}
	}
	if base == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(base, "sdkbench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
