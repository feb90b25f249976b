package queue

import (
	"slices"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
)

const grace = 150 * time.Millisecond

// TestSweepOrphanWithoutDeadline: a worker moved the item into its processing list and died
// before ZADD. After the grace period the item is retried; before it, nothing moves.
func TestSweepOrphanWithoutDeadline(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	mod := Module{m, "u"}
	b.push(t, m, false, items("u", "orphan", "live")...)
	// orphan: LMOVE into processing, no deadline (what an SDK doing BLMOVE then ZADD leaves).
	orphan, _ := b.rdb.LMove(b.ctx, protocol.CheckKey(m), protocol.CheckProcessingKey(m), "LEFT", "RIGHT").Result()
	live := (&pyWorker{t: t, rdb: b.rdb, module: m, timeout: 60}).takeCheck(b.ctx)

	start := time.Now()
	res, err := b.c.SweepOrphans(b.ctx, mod, grace, now)
	if err != nil {
		t.Fatal(err)
	}
	if res.Suspects != 1 || res.Requeued != 0 {
		t.Fatalf("first sweep = %+v, want one suspect", res)
	}
	waitFor(t, "orphan requeued", func() bool {
		res, err = b.c.SweepOrphans(b.ctx, mod, grace, now)
		if err != nil {
			t.Fatal(err)
		}
		return res.Requeued == 1
	})
	if time.Since(start) < grace {
		t.Errorf("requeued after %v, before the grace period", time.Since(start))
	}
	if got := b.ids(t, protocol.CheckKey(m)); !slices.Equal(got, []string{"orphan"}) {
		t.Errorf(":check = %v, want the orphan back", got)
	}
	if got, _ := b.rdb.LRange(b.ctx, protocol.CheckProcessingKey(m), 0, -1).Result(); !slices.Equal(got, []string{live}) {
		t.Errorf("processing = %v, want only the live item", got)
	}
	if cur, _ := b.jobItem(t, m, "orphan"); mustInfo(t, cur).Job.Attempt != 2 || cur == orphan {
		t.Errorf("jobs[orphan] = %s, want attempt 2", cur)
	}
	if n, _ := b.rdb.ZCard(b.ctx, protocol.SuspectsKey(m)).Result(); n != 0 {
		t.Errorf("%d suspects left", n)
	}
}

// TestSweepOrphanGetsDeadline: a slow worker that sets its deadline during the grace period
// is left alone.
func TestSweepOrphanGetsDeadline(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	b.push(t, m, false, newItem("a", ""))
	item, _ := b.rdb.LMove(b.ctx, protocol.CheckKey(m), protocol.CheckProcessingKey(m), "LEFT", "RIGHT").Result()
	if res, err := b.c.SweepOrphans(b.ctx, Module{m, ""}, grace, now); err != nil || res.Suspects != 1 {
		t.Fatalf("sweep = %+v, %v", res, err)
	}
	b.rdb.ZAdd(b.ctx, protocol.TimeoutsKey, redis.Z{Score: b.serverNow(t) + 60, Member: protocol.TimeoutMember(protocol.CheckKey(m), item)})
	deadline := time.Now().Add(2 * grace)
	for time.Now().Before(deadline) {
		res, err := b.c.SweepOrphans(b.ctx, Module{m, ""}, grace, now)
		if err != nil || res.Suspects != 0 || res.Requeued != 0 {
			t.Fatalf("sweep = %+v, %v; want nothing to do", res, err)
		}
	}
	if n, _ := b.rdb.ZCard(b.ctx, protocol.SuspectsKey(m)).Result(); n != 0 {
		t.Errorf("%d suspects left", n)
	}
}

// TestSweepLostItem: an upstream worker LPOPs and dies before add_timeout: the item is in no
// list. After the grace period, and once no result awaits merge, it is retried from check.
func TestSweepLostItem(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	mod := Module{m, ""}
	b.push(t, m, false, items("", "lost", "other")...)
	b.rdb.LPop(b.ctx, protocol.CheckKey(m))                 // the crash
	b.rdb.RPush(b.ctx, protocol.DoneKey, `{"module": "x"}`) // an unmerged result of someone

	if res, err := b.c.SweepOrphans(b.ctx, mod, grace, now); err != nil || res.Suspects != 1 {
		t.Fatalf("first sweep = %+v, %v; want one suspect", res, err)
	}
	waitFor(t, "grace over", func() bool {
		res, err := b.c.SweepOrphans(b.ctx, mod, grace, now)
		if err != nil {
			t.Fatal(err)
		}
		if res.Requeued != 0 {
			t.Fatal("requeued while a result awaited merge")
		}
		v, _ := b.rdb.ZRangeWithScores(b.ctx, protocol.SuspectsKey(m), 0, 0).Result()
		return len(v) == 1 && int64(b.serverNow(t)*1000)-int64(v[0].Score) > grace.Milliseconds()
	})
	if res, err := b.c.SweepOrphans(b.ctx, mod, grace, now); err != nil || res.Suspects != 1 || res.Requeued != 0 {
		t.Fatalf("sweep with a result pending = %+v, %v", res, err)
	}
	b.rdb.Del(b.ctx, protocol.DoneKey) // merged
	res, err := b.c.SweepOrphans(b.ctx, mod, grace, now)
	if err != nil || res.Requeued != 1 {
		t.Fatalf("sweep = %+v, %v; want the lost job requeued", res, err)
	}
	if got := b.ids(t, protocol.CheckKey(m)); !slices.Equal(got, []string{"lost", "other"}) {
		t.Errorf(":check = %v", got)
	}
	head, _ := b.rdb.LIndex(b.ctx, protocol.CheckKey(m), 0).Result()
	if mustInfo(t, head).Job.Attempt != 2 {
		t.Errorf("requeued %s, want attempt 2", head)
	}
}

// TestSweepLeavesHealthyJobs: queued, running, retrying and parked jobs are not lost.
func TestSweepLeavesHealthyJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	mod := Module{m, ""}
	b.push(t, m, false, items("", "queued", "running", "retrying", "parked")...)
	w := &pyWorker{t: t, rdb: b.rdb, module: m, timeout: 60}
	b.rdb.LMove(b.ctx, protocol.CheckKey(m), protocol.CheckKey(m), "LEFT", "RIGHT") // "running" first
	w.finishCheck(b.ctx, w.takeCheck(b.ctx), true)
	w.takeRun(b.ctx) // running, with a deadline
	for _, id := range []string{"retrying", "parked"} {
		cur, _ := b.jobItem(t, m, id)
		p := RetryPolicy{Base: time.Hour}
		if id == "parked" {
			p.MaxAttempts = 1
		}
		if _, err := b.c.Fail(b.ctx, JobRef{m, id, mustInfo(t, cur).Job.Token, 1}, "x", p); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		res, err := b.c.SweepOrphans(b.ctx, mod, 0, now)
		if err != nil || res.Requeued+res.Retrying+res.Suspects+len(res.Parked)+len(res.Dropped) != 0 {
			t.Fatalf("sweep = %+v, %v; want nothing", res, err)
		}
	}
}
