package sdk

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// TestRunTimeout (scenario 8): a run that outlasts TIMEOUT has its context cancelled at the
// deadline, its result is discarded and the item stays held with an expired deadline; once the
// (upstream-style) reaper puts it back, the next run completes.
func TestRunTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.file("a.txt", "abc")
	item := e.item(id, "a.txt", "uid-m", 1)
	var calls atomic.Int32
	cancelled := make(chan time.Duration, 1)
	h := &handler{run: func(ctx context.Context, job *Job) (Result, error) {
		job.Log.Info().Msg("start")
		if calls.Add(1) == 1 {
			start := time.Now()
			<-ctx.Done()
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				t.Errorf("ctx.Err() = %v, want DeadlineExceeded", ctx.Err())
			}
			cancelled <- time.Since(start)
			return Result{Document: map[string]any{"late": true}}, nil // discarded
		}
		return Result{Document: map[string]any{"note": "hello"}}, nil
	}}
	cfg := e.config("m")
	cfg.Timeout = 400 * time.Millisecond
	e.push("m:run", item)
	e.serve(cfg, h)
	if d := <-cancelled; d > cfg.Timeout+200*time.Millisecond {
		t.Errorf("ctx ended %v after the run started, want about %v", d, cfg.Timeout)
	}
	e.eventually("the timeout logged", func() bool { return e.logs.count("run timed out") == 1 })
	if n := e.llen(protocol.DoneKey); n != 0 {
		t.Fatalf("%d done messages after a timeout, want 0", n)
	}
	if got := e.lrange("m:run:processing"); len(got) != 1 || got[0] != item {
		t.Fatalf("m:run:processing = %q, want the item left for the reaper", got)
	}
	// The worker's deadline (its clock) can end a few ms before the Redis one (TIME).
	e.eventually("the reaper finds the expired member", func() bool { return e.reapExpired() == 1 })
	raw := e.nextDone()
	if m, _ := mustDone(t, raw); m.Error != "" || !strings.Contains(string(m.Document), `"note":"hello"`) || strings.Contains(raw, "late") {
		t.Errorf("done %s", raw)
	}
	e.eventually("the second run's log", func() bool {
		b, _ := os.ReadFile(filepath.Join(e.meta, "by-id", id, "m", LogFileName))
		return strings.Count(string(b), "run started") == 2 && strings.Count(string(b), "INF start") == 2 &&
			strings.Contains(string(b), "run timed out") && strings.Contains(string(b), "run done")
	})
}

// TestCheckTimeout (scenario 9): a check that hangs past TIMEOUT is left for the reaper; once
// requeued, a check that returns in time lets the run complete.
func TestCheckTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.file("a.txt", "abc")
	var calls atomic.Int32
	h := &handler{check: func(ctx context.Context, _ *Job) (bool, error) {
		if calls.Add(1) == 1 {
			<-ctx.Done()
			return true, nil // too late: discarded
		}
		return true, nil
	}}
	cfg := e.config("m")
	cfg.Timeout = 300 * time.Millisecond
	e.push("m:check", e.item(id, "a.txt", "uid-m", 1))
	e.serve(cfg, h)
	e.eventually("the check timeout logged", func() bool { return e.logs.count("check timed out") == 1 })
	if e.llen("m:check:processing") != 1 || e.llen("m:run") != 0 || e.llen(protocol.DoneKey) != 0 {
		t.Fatalf("after a check timeout: check:processing %d, run %d, done %d; want 1, 0, 0",
			e.llen("m:check:processing"), e.llen("m:run"), e.llen(protocol.DoneKey))
	}
	// The worker's own timer may fire a moment before the deadline it set by the Redis clock:
	// reap until that deadline has passed too.
	reaped := 0
	e.eventually("the reaper finds the expired check", func() bool { reaped += e.reapExpired(); return reaped > 0 })
	if reaped != 1 {
		t.Fatalf("reaper found %d expired members, want 1", reaped)
	}
	if m, info := mustDone(t, e.nextDone()); m.Error != "" || info.ID != id {
		t.Errorf("done %+v", m)
	}
	if n := len(h.spans()); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
}
