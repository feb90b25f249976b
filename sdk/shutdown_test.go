package sdk

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// TestShutdownFinishesJob: stopping lets the current run finish within the grace period; its
// result is sent and Serve returns nil.
func TestShutdownFinishesJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	started := make(chan struct{})
	h := &handler{run: func(ctx context.Context, _ *Job) (Result, error) {
		close(started)
		time.Sleep(300 * time.Millisecond) // simulated work
		if ctx.Err() != nil {
			t.Errorf("run cancelled during the grace period: %v", ctx.Err())
		}
		return Result{Document: map[string]any{"note": "finished"}}, nil
	}}
	cfg := e.config("m")
	cfg.Shares = []Share{{Name: "gpu", Slice: time.Second}}
	cfg.WorkerID = "w1"
	r := e.serve(cfg, h)
	e.push("m:run", e.item(e.file("a.txt", "a"), "a.txt", "uid-m", 1), e.item(e.file("b.txt", "b"), "b.txt", "uid-m", 1))
	<-started
	if err := r.stop(t); err != nil {
		t.Fatalf("Serve = %v, want nil", err)
	}
	if m, _ := mustDone(t, e.nextDone()); m.Error != "" || !strings.Contains(string(m.Document), "finished") {
		t.Errorf("done %+v", m)
	}
	if n := e.llen("m:run"); n != 1 {
		t.Errorf("m:run has %d items, want the untouched second one", n)
	}
	if e.llen("m:run:processing") != 0 || slices.Contains(e.lrange("gpu:share"), "w1") {
		t.Errorf("after shutdown: processing %q, gpu:share %q; want both free of this worker", e.lrange("m:run:processing"), e.lrange("gpu:share"))
	}
}

// TestShutdownHandsBack: a job still running when the grace period ends is cancelled and its
// item goes back, unchanged, to the head of its queue; no failure is reported.
func TestShutdownHandsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		ignoresCtx  bool
		phase, list string
	}{
		{"run returns on cancel", false, "run", "m:run"},
		{"run ignores ctx", true, "run", "m:run"},
		{"check returns on cancel", false, "check", "m:check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			started, unblock := make(chan struct{}), make(chan struct{})
			defer close(unblock)
			block := func(ctx context.Context) {
				close(started)
				if tc.ignoresCtx {
					<-unblock
				} else {
					<-ctx.Done()
				}
			}
			h := &handler{}
			if tc.phase == "run" {
				h.run = func(ctx context.Context, _ *Job) (Result, error) { block(ctx); return Result{}, ctx.Err() }
			} else {
				h.check = func(ctx context.Context, _ *Job) (bool, error) { block(ctx); return false, ctx.Err() }
			}
			cfg := e.config("m")
			cfg.ShutdownGrace = 200 * time.Millisecond
			first := e.item(e.file("a.txt", "a"), "a.txt", "uid-m", 1)
			e.push(tc.list, first, e.item(e.file("b.txt", "b"), "b.txt", "uid-m", 1))
			r := e.serve(cfg, h)
			<-started
			begin := time.Now()
			if err := r.stop(t); err != nil {
				t.Fatalf("Serve = %v, want nil", err)
			}
			if d := time.Since(begin); d > 3*time.Second {
				t.Errorf("Serve took %v to stop with a %v grace", d, cfg.ShutdownGrace)
			}
			if got := e.lrange(tc.list); len(got) != 2 || got[0] != first {
				t.Errorf("%s = %q, want the handed-back item first", tc.list, got)
			}
			n, _ := e.rdb.ZCard(e.ctx, protocol.TimeoutsKey).Result()
			if n != 0 || e.llen(tc.list+":processing") != 0 || e.llen(protocol.DoneKey) != 0 {
				t.Errorf("after hand-back: %d deadlines, %d processing, %d done; want 0, 0, 0", n, e.llen(tc.list+":processing"), e.llen(protocol.DoneKey))
			}
		})
	}
}
