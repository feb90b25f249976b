package sdk

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestLoadUnloadPerRunPhase: Load runs once before a phase's first run and Unload once after
// its last; an idle worker, however many times it wakes, calls neither.
func TestLoadUnloadPerRunPhase(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := &handler{}
	h.run = func(context.Context, *Job) (Result, error) {
		if l, u := h.phases(); l != u+1 {
			t.Errorf("Run outside a phase: %d loads, %d unloads", l, u)
		}
		return Result{}, nil
	}
	// A batch's items are queued together: pushed one by one, the worker could run the first
	// and end its phase before the next arrived, which is a second phase.
	batch := func(n int, prefix string) {
		var items []string
		for i := range n {
			rel := fmt.Sprintf("%s%d.txt", prefix, i)
			items = append(items, e.item(e.file(rel, rel), rel, "uid-m", 1))
		}
		e.push("m:check", items...)
		for range n {
			e.nextDone()
		}
	}
	e.serve(e.config("m"), h)
	batch(3, "a")
	e.eventually("the phase to end", func() bool { _, u := h.phases(); return u == 1 })
	// Idle: let the worker wake up a few times (each wake is one BLMOVE per watched list).
	start := e.blmoveCalls()
	e.eventually("idle wake-ups", func() bool { return e.blmoveCalls() >= start+4 })
	if l, u := h.phases(); l != 1 || u != 1 {
		t.Errorf("after an idle spell: %d loads, %d unloads; want 1, 1", l, u)
	}
	batch(2, "b")
	e.eventually("the second phase to end", func() bool { _, u := h.phases(); return u == 2 })
	if l, _ := h.phases(); l != 2 {
		t.Errorf("%d loads after two phases, want 2", l)
	}
	if n := len(h.spans()); n != 5 {
		t.Errorf("%d runs, want 5", n)
	}
}

// blmoveCalls reads how many BLMOVE commands the server ran.
func (e *testEnv) blmoveCalls() int {
	e.t.Helper()
	info, err := e.rdb.Info(e.ctx, "commandstats").Result()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_blmove:calls="); ok {
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return n
		}
	}
	return 0
}
