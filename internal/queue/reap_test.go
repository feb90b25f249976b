package queue

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
)

// now: no backoff, so a reaped attempt goes straight back to the head of its queue.
var now = RetryPolicy{Base: -1}

func reapOpts(p RetryPolicy, mods ...Module) ReapOptions {
	return ReapOptions{Modules: mods, Policy: p}
}

func TestReapRequeuesExpiredToHead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	b.push(t, m, false, items("u", "a", "b", "c")...)
	// A worker whose TIMEOUT already passed: its deadline is behind the server clock.
	w := &pyWorker{t: t, rdb: b.rdb, module: m, timeout: -5}
	a := w.takeCheck(b.ctx)
	live := &pyWorker{t: t, rdb: b.rdb, module: m, timeout: 60}
	live.finishCheck(b.ctx, live.takeCheck(b.ctx), true) // b → :run
	bRun := w.takeRun(b.ctx)                             // b in run:processing, expired

	res, err := b.c.Reap(b.ctx, reapOpts(now, Module{m, "u"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Expired != 2 || res.Requeued != 2 || len(res.Parked) != 0 || len(res.Dropped) != 0 {
		t.Fatalf("reap = %+v, want 2 expired and requeued", res)
	}
	if got := b.ids(t, protocol.CheckKey(m)); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf(":check = %v, want a back at the head", got)
	}
	if got := b.ids(t, protocol.RunKey(m)); !slices.Equal(got, []string{"b"}) {
		t.Errorf(":run = %v, want b back in run (check is not redone)", got)
	}
	for _, k := range []string{protocol.CheckProcessingKey(m), protocol.RunProcessingKey(m)} {
		if n := b.llen(t, k); n != 0 {
			t.Errorf("%s has %d items", k, n)
		}
	}
	if n, _ := b.rdb.ZCard(b.ctx, protocol.TimeoutsKey).Result(); n != 0 {
		t.Errorf("timeouts has %d members", n)
	}
	// The requeued item is the next attempt: a new string, recorded as the job's current item.
	head, _ := b.rdb.LIndex(b.ctx, protocol.CheckKey(m), 0).Result()
	if head == a || mustInfo(t, head).Job.Attempt != 2 || mustInfo(t, head).Job.Token != mustInfo(t, a).Job.Token {
		t.Errorf("requeued item %s: want attempt 2 of the same token", head)
	}
	if cur, _ := b.jobItem(t, m, "a"); cur != head {
		t.Errorf("jobs[a] = %s, want the requeued item", cur)
	}
	// The first worker, late, finds its member gone and drops its result, as upstream does.
	if live.removeTimeout(b.ctx, protocol.CheckKey(m), a) || live.removeTimeout(b.ctx, protocol.RunKey(m), bRun) {
		t.Error("a late worker still found its timeouts member")
	}
}

// TestReapCompletionBetweenScanAndRequeue: the worker's ZREM/LREM land after the reaper listed
// the member but before its requeue script: the completion wins, nothing is requeued.
func TestReapCompletionBetweenScanAndRequeue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	b.push(t, m, false, newItem("a", ""))
	now := b.serverNow(t)
	w := &pyWorker{t: t, rdb: b.rdb, module: m, timeout: -1, clock: func() float64 { return now }}
	a := w.takeCheck(b.ctx)

	members, err := listExpiredScript.Run(b.ctx, b.rdb, []string{protocol.TimeoutsKey}, 10).StringSlice()
	if err != nil || len(members) != 1 {
		t.Fatalf("expired = %v, %v", members, err)
	}
	// The worker completes in the gap (its clock says it is in time).
	w.clock = func() float64 { return now - 10 }
	if !w.finishCheck(b.ctx, a, false) {
		t.Fatal("worker could not complete")
	}
	var res ReapResult
	if err := b.c.reapMembers(b.ctx, members, map[string]string{m: ""}, now0(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Gone != 1 || res.Requeued+res.Retrying != 0 {
		t.Fatalf("reap = %+v, want the member gone and nothing requeued", res)
	}
	if n := b.llen(t, protocol.CheckKey(m)); n != 0 {
		t.Errorf(":check has %d items: a completed job was requeued", n)
	}
	if n := b.llen(t, protocol.DoneKey); n != 1 {
		t.Errorf("modules:done has %d results, want 1", n)
	}
}

func now0() RetryPolicy { return now.withDefaults() }

// TestReapMemberWithoutItem: an expired member whose item left the processing list (the worker
// removed it but died before ZREM) is removed and nothing is requeued.
func TestReapMemberWithoutItem(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	b.push(t, m, false, newItem("a", ""))
	a, _ := b.jobItem(t, m, "a")
	member := protocol.TimeoutMember(protocol.CheckKey(m), a)
	b.rdb.ZAdd(b.ctx, protocol.TimeoutsKey, redis.Z{Score: b.serverNow(t) - 1, Member: member})
	b.rdb.LPop(b.ctx, protocol.CheckKey(m)) // the item is nowhere

	res, err := b.c.Reap(b.ctx, reapOpts(now, Module{m, ""}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Expired != 1 || res.Gone != 1 || res.Requeued != 0 {
		t.Fatalf("reap = %+v", res)
	}
	if n, _ := b.rdb.ZCard(b.ctx, protocol.TimeoutsKey).Result(); n != 0 {
		t.Errorf("member kept")
	}
	if n := b.llen(t, protocol.CheckKey(m)); n != 0 {
		t.Errorf(":check has %d items", n)
	}
}

// TestReapUsesServerClock: deadlines are compared with Redis TIME. A worker whose clock runs an
// hour ahead of the server writes deadlines an hour late; the reaper does not care what the
// daemon's clock says either.
func TestReapUsesServerClock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	b.push(t, m, false, items("", "past", "future", "skewed")...)
	srv := b.serverNow(t)
	take := func(deadline float64) {
		w := &pyWorker{t: t, rdb: b.rdb, module: m, timeout: 0, clock: func() float64 { return deadline }}
		w.takeCheck(b.ctx)
	}
	take(srv - 0.5)      // past by the server clock
	take(srv + 30)       // in the future by the server clock
	take(srv + 3600 - 1) // worker clock +1 h, TIMEOUT passed a second ago on its clock: not expired on the server

	res, err := b.c.Reap(b.ctx, reapOpts(now, Module{m, ""}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Expired != 1 || res.Requeued != 1 {
		t.Fatalf("reap = %+v, want exactly the past deadline", res)
	}
	if got := b.ids(t, protocol.CheckKey(m)); !slices.Equal(got, []string{"past"}) {
		t.Errorf(":check = %v, want [past]", got)
	}
}

func TestReapDropsForeignAndStale(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	expired := b.serverNow(t) - 1
	seed := func(q, item string) {
		b.rdb.RPush(b.ctx, protocol.ProcessingKey(q), item)
		b.rdb.ZAdd(b.ctx, protocol.TimeoutsKey, redis.Z{Score: expired, Member: protocol.TimeoutMember(q, item)})
	}
	b.push(t, m, false, newItem("old", "u1"))
	old, _ := b.rdb.LPop(b.ctx, protocol.CheckKey(m)).Result()
	seed(protocol.CheckKey(m), old)                             // built for uid u1, module is now u2
	seed(protocol.CheckKey(m), `{"id": "legacy", "paths": {}}`) // upstream core item
	seed(protocol.RunKey("gone"), `{"id": "x"}`)                // module no longer configured
	b.rdb.ZAdd(b.ctx, protocol.TimeoutsKey, redis.Z{Score: expired, Member: "not json"})
	b.rdb.ZAdd(b.ctx, protocol.TimeoutsKey, redis.Z{Score: expired, Member: `{"q": "a:b:c", "d": "{}"}`})

	res, err := b.c.Reap(b.ctx, reapOpts(now, Module{m, "u2"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Expired != 5 || len(res.Dropped) != 5 || res.Requeued != 0 {
		t.Fatalf("reap = %+v, want 5 dropped", res)
	}
	reasons := map[string]string{}
	for _, d := range res.Dropped {
		reasons[d.ID] = d.Reason
	}
	if !strings.Contains(reasons["old"], `uid "u1"`) || !strings.Contains(reasons["legacy"], "no job fields") ||
		!strings.Contains(reasons["x"], "not configured") {
		t.Errorf("reasons = %q", reasons)
	}
	if n, _ := b.rdb.ZCard(b.ctx, protocol.TimeoutsKey).Result(); n != 0 {
		t.Errorf("timeouts has %d members", n)
	}
	if _, ok := b.jobItem(t, m, "old"); ok {
		t.Error("jobs entry of a dropped item kept")
	}
	if n := b.llen(t, protocol.CheckProcessingKey(m)) + b.llen(t, protocol.CheckKey(m)); n != 0 {
		t.Errorf("%d items left", n)
	}
}

// TestReapDropsStaleHead: a worker with the new uid pushes an old-uid item back to the head
// and sleeps (a Python worker's uid-mismatch loop); the next reaper pass removes it.
func TestReapDropsStaleHead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	b.push(t, m, false, newItem("old", "u1"))
	b.push(t, m, false, newItem("new", "u2"))
	b.rdb.LPush(b.ctx, protocol.RunKey(m), `{"id": "legacy"}`)
	res, err := b.c.Reap(b.ctx, reapOpts(now, Module{m, "u2"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Dropped) != 2 {
		t.Fatalf("dropped %+v, want old and legacy", res.Dropped)
	}
	if got := b.ids(t, protocol.CheckKey(m)); !slices.Equal(got, []string{"new"}) {
		t.Errorf(":check = %v", got)
	}
	if _, ok := b.jobItem(t, m, "old"); ok {
		t.Error("jobs[old] kept")
	}
	// Nothing stale at the head: nothing dropped.
	if res, err := b.c.Reap(b.ctx, reapOpts(now, Module{m, "u2"})); err != nil || len(res.Dropped) != 0 {
		t.Errorf("second pass: %+v, %v", res, err)
	}
}

func TestRetryBackoffThenPark(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	p := RetryPolicy{MaxAttempts: 3, Base: 40 * time.Millisecond, Max: 60 * time.Millisecond}
	b.push(t, m, false, newItem("a", ""))
	w := &pyWorker{t: t, rdb: b.rdb, module: m, timeout: -1}
	opts := reapOpts(p, Module{m, ""})
	for attempt := 1; attempt <= 3; attempt++ {
		var item string
		waitFor(t, "attempt on :check", func() bool {
			if _, err := b.c.Reap(b.ctx, opts); err != nil {
				t.Fatal(err)
			}
			item = w.takeCheck(b.ctx)
			return item != ""
		})
		if got := mustInfo(t, item).Job.Attempt; got != attempt {
			t.Fatalf("took attempt %d, want %d", got, attempt)
		}
		res, err := b.c.Reap(b.ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if attempt < 3 {
			if res.Retrying != 1 {
				t.Fatalf("attempt %d: reap = %+v, want it waiting for its backoff", attempt, res)
			}
			score, err := b.rdb.ZScore(b.ctx, protocol.RetryKey(m), protocol.RetryMember(protocol.PhaseCheck, mustNext(t, item))).Result()
			if err != nil {
				t.Fatalf("attempt %d: next attempt not in the retry set: %v", attempt, err)
			}
			wantDelay := p.Delay(attempt).Milliseconds()
			if d := int64(score) - int64(b.serverNow(t)*1000); d > wantDelay || d < -1000 {
				t.Errorf("attempt %d: due in %d ms, want <= %d", attempt, d, wantDelay)
			}
			continue
		}
		if len(res.Parked) != 1 {
			t.Fatalf("attempt 3: reap = %+v, want parked", res)
		}
		pk := res.Parked[0]
		if pk.ID != "a" || pk.Attempts != 3 || pk.Reason != "timed out in check (attempt 3)" {
			t.Errorf("parked = %+v", pk)
		}
	}
	failed, err := b.c.Failed(b.ctx, m, 0)
	if err != nil || len(failed) != 1 {
		t.Fatalf("failed = %+v, %v", failed, err)
	}
	f := failed[0]
	if f.ID != "a" || f.Attempts != 3 || f.Phase != protocol.PhaseCheck || f.Reason != "timed out in check (attempt 3)" ||
		f.FailedAt.IsZero() || f.DispatchedAt.IsZero() || time.Since(f.FailedAt) > time.Minute {
		t.Errorf("failed job = %+v", f)
	}
	if _, ok := b.jobItem(t, m, "a"); ok {
		t.Error("a parked job is still in flight")
	}
	n, _ := b.c.Counts(b.ctx, m)
	if n.Failed != 1 || n.Window() != 0 || n.Retry != 0 {
		t.Errorf("counts = %+v", n)
	}

	// Asked to run again: a new dispatch, attempt 1, at the tail of :check.
	retried, err := b.c.RetryFailed(b.ctx, m, nil)
	if err != nil || len(retried) != 1 || retried[0].ID != "a" || retried[0].Token == f.Token {
		t.Fatalf("RetryFailed = %+v, %v", retried, err)
	}
	item, ok := b.jobItem(t, m, "a")
	if info := mustInfo(t, item); !ok || info.Job.Attempt != 1 || info.Job.Token != retried[0].Token {
		t.Errorf("jobs[a] = %s", item)
	}
	if got := b.ids(t, protocol.CheckKey(m)); !slices.Equal(got, []string{"a"}) {
		t.Errorf(":check = %v", got)
	}
	if n, _ := b.c.Counts(b.ctx, m); n.Failed != 0 {
		t.Errorf("still parked: %+v", n)
	}
}

func mustNext(t testing.TB, item string) string {
	t.Helper()
	info := mustInfo(t, item)
	info.Job.Attempt++
	next, err := protocol.WithJob(item, info.Job)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	p := RetryPolicy{}
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second,
		9: 256 * time.Second, 10: 5 * time.Minute, 60: 5 * time.Minute} {
		if got := p.Delay(attempt); got != want {
			t.Errorf("Delay(%d) = %v, want %v", attempt, got, want)
		}
	}
	if got := (RetryPolicy{Base: -1}).Delay(3); got != 0 {
		t.Errorf("negative base: Delay = %v", got)
	}
}

// TestPipelinedScriptsAfterScriptFlush: a pipeline sends only EVALSHA; after the server's
// script cache is emptied (restart, SCRIPT FLUSH) the batch is reloaded and rerun.
func TestPipelinedScriptsAfterScriptFlush(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.push(t, "m", false, newItem("a", ""))
	if err := b.rdb.ScriptFlush(b.ctx).Err(); err != nil {
		t.Fatal(err)
	}
	w := &pyWorker{t: t, rdb: b.rdb, module: "m", timeout: -1}
	w.takeCheck(b.ctx)
	res, err := b.c.Reap(b.ctx, reapOpts(now, Module{"m", ""}))
	if err != nil || res.Requeued != 1 {
		t.Fatalf("reap after SCRIPT FLUSH = %+v, %v", res, err)
	}
}
