package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/homeindex/homeindex/protocol"
)

// rawWorker is a module worker written against the raw Redis protocol exactly as the upstream
// Python runtime speaks it (docs/protocol.md): LPOP, then MULTI ZADD timeouts +
// RPUSH processing, the work, then ZREM + LREM and RPUSH to :run or modules:done.
type rawWorker struct {
	t       testing.TB
	rdb     *redis.Client
	module  string
	timeout time.Duration
	// run returns the document fields to add; an error is reported with _hi_error.
	run func(doc map[string]any) (map[string]any, any, error)

	stop func() // stops serve and waits for it

	mu      sync.Mutex
	runs    []workerRun
	idle    atomic.Int64 // polls that found both queues empty after the first job (the worker starved)
	started bool         // serve found its first job
}

// workerRun records one run: which document, the first path, when it started and ended.
type workerRun struct {
	ID         string
	Path       string
	Start, End time.Time
}

func (w *rawWorker) record() []workerRun {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]workerRun(nil), w.runs...)
}

// serve runs check and run phases until ctx ends.
func (w *rawWorker) serve(ctx context.Context) {
	for ctx.Err() == nil {
		did := w.phase(ctx, protocol.CheckKey(w.module))
		did = w.phase(ctx, protocol.RunKey(w.module)) || did
		w.started = w.started || did
		if !did {
			if w.started {
				w.idle.Add(1)
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond): // an idle poll, as the Python loop's
			}
		}
	}
}

func (w *rawWorker) phase(ctx context.Context, queue string) bool {
	item, err := w.rdb.LPop(ctx, queue).Result()
	if errors.Is(err, redis.Nil) || err != nil {
		return false
	}
	member := protocol.TimeoutMember(queue, item)
	deadline := float64(time.Now().Add(w.timeout).UnixNano()) / 1e9
	proc := protocol.ProcessingKey(queue)
	if _, err := w.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, "timeouts", redis.Z{Score: deadline, Member: member})
		p.RPush(ctx, proc, item)
		return nil
	}); err != nil {
		return false
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(item), &doc); err != nil {
		if w.t == nil { // a worker process (bench_worker_test.go) has no test to fail
			fmt.Fprintf(os.Stderr, "worker: bad item %q: %v\n", item, err)
			os.Exit(1)
		}
		w.t.Errorf("worker: bad item %q: %v", item, err)
		return true
	}
	var msg map[string]any
	if queue == protocol.CheckKey(w.module) {
		msg = nil // check() is true: on to :run
	} else {
		r := workerRun{ID: fmt.Sprint(doc["id"]), Start: time.Now()}
		for p := range doc["paths"].(map[string]any) {
			r.Path = p // the first key; json decoding loses order, the test checks the set
			break
		}
		fields, content, err := w.run(doc)
		r.End = time.Now()
		w.mu.Lock()
		w.runs = append(w.runs, r)
		w.mu.Unlock()
		for k, v := range fields {
			doc[k] = v
		}
		msg = map[string]any{"module": w.module, "document": doc}
		if content != nil {
			msg["content"] = content
		}
		if err != nil {
			msg[protocol.DoneErrorField] = err.Error()
		}
	}
	if n, _ := w.rdb.ZRem(ctx, "timeouts", member).Result(); n == 0 {
		return true // reaped meanwhile: drop, as upstream does
	}
	w.rdb.LRem(ctx, proc, 0, item)
	if msg == nil {
		w.rdb.RPush(ctx, protocol.RunKey(w.module), item)
		return true
	}
	b, _ := json.Marshal(msg)
	w.rdb.RPush(ctx, "modules:done", b)
	return true
}
