package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
)

// BenchmarkAsynqNoop10k is the reference for the module pipeline's throughput
// (BenchmarkPipelineEndToEndSDK10k in internal/app): asynq's no-op drain of 10k tasks queued
// at once, with concurrency 10, against a redis-server of its own. The clock runs from the
// server's start to the last task handled; enqueueing is not timed.
func BenchmarkAsynqNoop10k(b *testing.B) {
	const n, concurrency = 10_000, 10
	for b.Loop() {
		b.StopTimer()
		srv := redistest.Start(b)
		opt := asynq.RedisClientOpt{Addr: srv.Addr()}
		client := asynq.NewClient(opt)
		for i := range n {
			payload := fmt.Appendf(nil, `{"id":"%016x","paths":{"d%02d/f%05d.txt":1767225600.5}}`, i, i%100, i)
			if _, err := client.Enqueue(asynq.NewTask("noop", payload)); err != nil {
				b.Fatal(err)
			}
		}
		client.Close()
		var handled atomic.Int64
		done := make(chan struct{})
		server := asynq.NewServer(opt, asynq.Config{Concurrency: concurrency, LogLevel: asynq.ErrorLevel})
		mux := asynq.NewServeMux()
		mux.HandleFunc("noop", func(context.Context, *asynq.Task) error {
			if handled.Add(1) == n {
				close(done)
			}
			return nil
		})
		b.StartTimer()
		if err := server.Start(mux); err != nil {
			b.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(5 * time.Minute):
			b.Fatalf("%d of %d tasks handled in 5 minutes", handled.Load(), n)
		}
		b.StopTimer()
		server.Shutdown()
		b.StartTimer()
	}
	b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "tasks/s")
}
