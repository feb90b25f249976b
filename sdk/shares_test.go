package sdk

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
)

// shareWorker is one module worker in a share test, with its recorded runs.
type shareWorker struct {
	name string
	h    *handler
}

// startShared starts one worker per module name, each in the given groups with slice, and
// returns them once all are serving (idle).
func startShared(e *testEnv, slice time.Duration, run time.Duration, groups map[string][]string) map[string]*shareWorker {
	e.t.Helper()
	out := map[string]*shareWorker{}
	for m, gs := range groups {
		sw := &shareWorker{name: m, h: &handler{run: func(ctx context.Context, _ *Job) (Result, error) {
			time.Sleep(run) // simulated work
			return Result{}, nil
		}}}
		cfg := e.config(m)
		cfg.WorkerID = "worker-" + m
		for _, g := range gs {
			cfg.Shares = append(cfg.Shares, Share{Name: g, Slice: slice})
		}
		e.serve(cfg, sw.h)
		out[m] = sw
	}
	return out
}

// queueAll pushes n run items for every module in one transaction, so all workers see work
// at once.
func (e *testEnv) queueAll(n int, modules ...string) {
	e.t.Helper()
	var items [][2]string
	for _, m := range modules {
		for i := range n {
			rel := fmt.Sprintf("%s/%d.txt", m, i)
			items = append(items, [2]string{m, e.item(e.file(rel, rel), rel, "uid-"+m, 1)})
		}
	}
	_, err := e.rdb.TxPipelined(e.ctx, func(p redis.Pipeliner) error {
		for _, it := range items {
			p.RPush(e.ctx, protocol.RunKey(it[0]), it[1])
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	for range items {
		if m, _ := mustDone(e.t, e.nextDone()); m.Error != "" {
			e.t.Fatalf("run failed: %s", m.Error)
		}
	}
}

// assertExclusive fails if a run of one worker overlapped a run of another (recorded start
// and end times of every run).
func assertExclusive(t *testing.T, a, b *shareWorker) {
	t.Helper()
	for _, x := range a.h.spans() {
		for _, y := range b.h.spans() {
			if x.start.Before(y.end) && y.start.Before(x.end) {
				t.Errorf("%s run [%v, %v] overlaps %s run [%v, %v]", a.name, x.start.Format("15:04:05.000"),
					x.end.Format("15:04:05.000"), b.name, y.start.Format("15:04:05.000"), y.end.Format("15:04:05.000"))
			}
		}
	}
}

// turns returns the order in which workers held the token: runs sorted by start, with
// consecutive runs of one worker merged.
func turns(ws ...*shareWorker) []string {
	type run struct {
		w     string
		start time.Time
	}
	var all []run
	for _, w := range ws {
		for _, s := range w.h.spans() {
			all = append(all, run{w.name, s.start})
		}
	}
	slices.SortFunc(all, func(a, b run) int { return a.start.Compare(b.start) })
	var out []string
	for _, r := range all {
		if len(out) == 0 || out[len(out)-1] != r.w {
			out = append(out, r.w)
		}
	}
	return out
}

// TestSharesRotate (scenario 14): three workers of different modules share gpu; no two runs
// overlap, the token rotates round-robin, and the share list is empty once all are idle.
func TestSharesRotate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws := startShared(e, 150*time.Millisecond, 40*time.Millisecond, map[string][]string{"a": {"gpu"}, "b": {"gpu"}, "c": {"gpu"}})
	e.queueAll(6, "a", "b", "c")
	a, b, c := ws["a"], ws["b"], ws["c"]
	assertExclusive(t, a, b)
	assertExclusive(t, b, c)
	assertExclusive(t, a, c)
	order := turns(a, b, c)
	t.Logf("turns: %v", order)
	if len(order) < 6 {
		t.Errorf("turns %v: want every worker to yield at least once", order)
	}
	if first := order[:3]; first[0] == first[1] || first[1] == first[2] || first[0] == first[2] {
		t.Errorf("turns %v: the first three are not one each", order)
	}
	e.eventually("gpu:share empty", func() bool { return e.llen("gpu:share") == 0 })
}

// TestSharesAllGroups (scenario 14): a worker needing gpu and licence runs only while holding
// both; workers needing one of them never overlap it; nobody starves.
func TestSharesAllGroups(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws := startShared(e, 100*time.Millisecond, 30*time.Millisecond,
		map[string][]string{"x": {"gpu"}, "y": {"licence", "gpu"}, "z": {"licence"}})
	e.queueAll(5, "x", "y", "z")
	assertExclusive(t, ws["x"], ws["y"])
	assertExclusive(t, ws["z"], ws["y"])
	for _, w := range ws {
		if n := len(w.h.spans()); n != 5 {
			t.Errorf("%s ran %d items, want 5", w.name, n)
		}
	}
}

// TestShareIdleHolderYields: a holder with no run work left gives the token up at once, not
// at the end of its (long) slice.
func TestShareIdleHolderYields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	started := make(chan struct{})
	release := make(chan struct{})
	a := &handler{run: func(context.Context, *Job) (Result, error) {
		close(started)
		<-release
		return Result{}, nil
	}}
	b := &handler{}
	for m, h := range map[string]*handler{"a": a, "b": b} {
		cfg := e.config(m)
		cfg.Shares = []Share{{Name: "gpu", Slice: time.Minute}}
		e.serve(cfg, h)
	}
	e.push("a:run", e.item(e.file("a.txt", "a"), "a.txt", "uid-a", 1))
	<-started
	e.push("b:run", e.item(e.file("b.txt", "b"), "b.txt", "uid-b", 1))
	e.eventually("b queued for gpu", func() bool { return e.llen("gpu:share") == 2 })
	close(release)
	begin := time.Now()
	e.nextDone()
	e.nextDone()
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("b waited %v for an idle holder, want far less than its one-minute slice", d)
	}
	assertExclusive(t, &shareWorker{"a", a}, &shareWorker{"b", b})
	e.eventually("gpu:share empty", func() bool { return e.llen("gpu:share") == 0 })
}

// TestShareEntryRefreshedDuringLongRun: a run longer than the share TTL keeps its token (the
// heartbeat refreshes the entry), so a waiting worker does not evict a live holder.
func TestShareEntryRefreshedDuringLongRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	started := make(chan struct{})
	a := &handler{run: func(context.Context, *Job) (Result, error) {
		close(started)
		time.Sleep(1200 * time.Millisecond) // four TTLs of simulated work
		return Result{}, nil
	}}
	b := &handler{}
	for m, h := range map[string]*handler{"a": a, "b": b} {
		cfg := e.config(m)
		cfg.ShareTTL = 300 * time.Millisecond
		cfg.Shares = []Share{{Name: "gpu", Slice: 100 * time.Millisecond}}
		e.serve(cfg, h)
	}
	e.push("a:run", e.item(e.file("a.txt", "a"), "a.txt", "uid-a", 1))
	<-started
	e.push("b:run", e.item(e.file("b.txt", "b"), "b.txt", "uid-b", 1))
	e.nextDone()
	e.nextDone()
	assertExclusive(t, &shareWorker{"a", a}, &shareWorker{"b", b})
	if n := e.logs.count("share token lost"); n != 0 {
		t.Errorf("%d share-token-lost lines", n)
	}
}

// TestShareCrashedHolder (scenario 13): the entry of a holder that died (no heartbeat) frees
// the token once its TTL passes; the waiting worker then runs.
func TestShareCrashedHolder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	expiry := e.now() + 0.5
	expiresAt := time.Now().Add(500 * time.Millisecond)
	e.push("gpu:share", "crashed")
	e.rdb.ZAdd(e.ctx, "gpu:share:ttl", redis.Z{Score: expiry, Member: "crashed"})
	h := &handler{}
	cfg := e.config("a")
	cfg.Shares = []Share{{Name: "gpu", Slice: time.Second}}
	e.serve(cfg, h)
	e.push("a:run", e.item(e.file("a.txt", "a"), "a.txt", "uid-a", 1))
	e.nextDone()
	if s := h.spans(); len(s) != 1 || s[0].start.Before(expiresAt.Add(-50*time.Millisecond)) {
		t.Errorf("runs %v: want one, starting after the dead holder's entry expired (%v)", s, expiresAt)
	}
	if got := e.lrange("gpu:share"); slices.Contains(got, "crashed") {
		t.Errorf("gpu:share = %q still holds the dead worker", got)
	}
}

// TestAcquireShareScript checks the turn script directly: an expired head is evicted without
// moving the live worker behind it; a head without an entry gets one (so it expires if dead);
// a worker without run work leaves.
func TestAcquireShareScript(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := e.now()
	e.push("gpu:share", "dead", "live", "me")
	e.rdb.ZAdd(e.ctx, "gpu:share:ttl", redis.Z{Score: now - 1, Member: "dead"}, redis.Z{Score: now + 60, Member: "live"})
	e.push("m:run", "{}")
	keys := []string{"gpu:share", "gpu:share:ttl", "m:run"}
	acquire := func(id string) int64 {
		n, err := acquireShareScript.Run(e.ctx, e.rdb, keys, id, "5").Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := acquire("me"); n != 0 {
		t.Errorf("acquire = %d, want 0 (live waits ahead)", n)
	}
	if got := strings.Join(e.lrange("gpu:share"), ","); got != "live,me" {
		t.Errorf("gpu:share = %s, want live,me (dead evicted, live keeps its turn)", got)
	}
	if _, err := e.rdb.ZScore(e.ctx, "gpu:share:ttl", "dead").Result(); err != redis.Nil {
		t.Errorf("dead entry still scored (%v)", err)
	}
	e.rdb.ZRem(e.ctx, "gpu:share:ttl", "live") // an upstream worker just rotated to the head
	if n := acquire("me"); n != 0 {
		t.Errorf("acquire = %d, want 0", n)
	}
	if s, err := e.rdb.ZScore(e.ctx, "gpu:share:ttl", "live").Result(); err != nil || s < now+4 || s > now+6 {
		t.Errorf("head without an entry: score %f, %v; want about now+5", s, err)
	}
	e.rdb.LRem(e.ctx, "gpu:share", 0, "live")
	if n := acquire("me"); n != 1 {
		t.Errorf("acquire = %d, want 1 (head)", n)
	}
	e.rdb.Del(e.ctx, "m:run")
	if n := acquire("me"); n != -1 || e.llen("gpu:share") != 0 {
		t.Errorf("acquire without run work = %d, list %q; want -1 and an empty list", n, e.lrange("gpu:share"))
	}
}
