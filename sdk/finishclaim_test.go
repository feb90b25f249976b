package sdk

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/homeindex/homeindex/protocol"
)

// scriptCalls is how many scripts the Redis server ran (EVALSHA and EVAL) since its last
// CONFIG RESETSTAT, not counting the calls it refused (an EVALSHA of a script it does not know
// yet, which go-redis follows with an EVAL).
func (e *testEnv) scriptCalls() int {
	e.t.Helper()
	info, err := e.rdb.Info(e.ctx, "commandstats").Result()
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, m := range regexp.MustCompile(`cmdstat_eval(?:sha)?:calls=(\d+),.*failed_calls=(\d+)`).FindAllStringSubmatch(info, -1) {
		calls, _ := strconv.Atoi(m[1])
		failed, _ := strconv.Atoi(m[2])
		n += calls - failed
	}
	return n
}

// TestFinishTakesTheNextItem: a worker sends a run's outcome and takes its next item in one
// script, so a queue of n runs costs about n scripts, not a claim and a finish each (2n). It
// still holds one item at a time: the next is taken only as the last one's outcome is sent.
func TestFinishTakesTheNextItem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 20
	var items []string
	for i := range n {
		name := "f" + strconv.Itoa(i) + ".txt"
		items = append(items, e.item(e.file(name, name), name, "uid-m", 1))
	}
	var mu sync.Mutex
	var heldWhileRunning [][]string
	var scriptsAtFirst, scriptsAtLast int
	h := &handler{run: func(context.Context, *Job) (Result, error) {
		mu.Lock()
		heldWhileRunning = append(heldWhileRunning, e.lrange("m:run:processing"))
		switch len(heldWhileRunning) {
		case 1:
			scriptsAtFirst = e.scriptCalls()
		case n:
			scriptsAtLast = e.scriptCalls()
		}
		mu.Unlock()
		return Result{Document: map[string]any{"ok": true}}, nil
	}}
	e.push("m:run", items...)
	if err := e.rdb.ConfigResetStat(e.ctx).Err(); err != nil {
		t.Fatal(err)
	}
	e.serve(e.config("m"), h)
	for range n {
		if m, _ := mustDone(t, e.nextDone()); m.Error != "" {
			t.Fatalf("done with error %q", m.Error)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// From the first run to the last, one script for each run that ended (a claim and a
	// finish each would make twice as many).
	if got, want := scriptsAtLast-scriptsAtFirst, n-1; got != want {
		t.Errorf("%d scripts between the first and the last of %d runs, want %d", got, n, want)
	}
	for i, held := range heldWhileRunning {
		if !slices.Equal(held, items[i:i+1]) {
			t.Errorf("while run %d ran, m:run:processing held %q, want its item alone", i, held)
		}
	}
}

// TestHandBackNextItem: an item a finish took for the next step goes back to the head of its
// queue, unstarted, when Serve stops before that step.
func TestHandBackNextItem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.item(e.file("a.txt", "a"), "a.txt", "uid-m", 1)
	b := e.item(e.file("b.txt", "b"), "b.txt", "uid-m", 1)
	w, err := NewWorker(e.config("m"), &handler{})
	if err != nil {
		t.Fatal(err)
	}
	e.push("m:run", a, b)
	l, st, err := w.claim(e.ctx, true)
	if err != nil || st != claimed || l.item != a {
		t.Fatalf("claim = %q, %v, %v; want item a", l.item, st, err)
	}
	w.next = &l
	w.handBackNext()
	if w.next != nil {
		t.Error("the next item is still recorded after it was handed back")
	}
	if got := e.lrange("m:run"); !slices.Equal(got, []string{a, b}) {
		t.Errorf("m:run = %q, want a back at the head", got)
	}
	n, _ := e.rdb.ZCard(e.ctx, protocol.TimeoutsKey).Result()
	if n != 0 || e.llen("m:run:processing") != 0 {
		t.Errorf("after hand-back: %d deadlines, %d processing; want 0, 0", n, e.llen("m:run:processing"))
	}
}
