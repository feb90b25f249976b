package queue

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
)

// rangeRecorder records the LRANGE/ZRANGE spans the client sends.
type rangeRecorder struct {
	mu    sync.Mutex
	spans []int64
}

func (r *rangeRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *rangeRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.record(cmd)
		return next(ctx, cmd)
	}
}
func (r *rangeRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			r.record(c)
		}
		return next(ctx, cmds)
	}
}

func (r *rangeRecorder) record(cmd redis.Cmder) {
	if n := strings.ToLower(cmd.Name()); n != "lrange" && n != "zrange" {
		return
	}
	a := cmd.Args()
	start, _ := a[2].(int64)
	stop, _ := a[3].(int64)
	span := stop - start + 1
	if stop < 0 {
		span = -1 // a whole-list read
	}
	r.mu.Lock()
	r.spans = append(r.spans, span)
	r.mu.Unlock()
}

func TestPurgeUID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	var olds, news []string
	var all []Item
	for i := range 2*purgePage + 10 { // several pages, old and new interleaved
		id := fmt.Sprintf("d%04d", i)
		uid := "new"
		if i%3 != 0 {
			uid = "old"
			olds = append(olds, id)
		} else {
			news = append(news, id)
		}
		all = append(all, newItem(id, uid))
	}
	b.push(t, m, false, all...)
	w := &pyWorker{t: t, rdb: b.rdb, module: m, timeout: 60}
	if running := w.takeCheck(b.ctx); mustInfo(t, running).ID != news[0] { // in a worker's hands: left alone
		t.Fatal("unexpected head")
	}
	b.rdb.LPush(b.ctx, protocol.CheckKey(m), `{"id": "legacy"}`)
	// An old-uid attempt in :run, one in the retry set, one parked.
	b.push(t, m, false, items("old", "run", "retry", "parked")...)
	for _, id := range []string{"run", "retry", "parked"} {
		cur, _ := b.jobItem(t, m, id)
		b.rdb.LRem(b.ctx, protocol.CheckKey(m), 1, cur)
		switch id {
		case "run":
			b.rdb.RPush(b.ctx, protocol.RunKey(m), cur)
		case "retry":
			b.c.Fail(b.ctx, JobRef{m, id, mustInfo(t, cur).Job.Token, 1}, "x", RetryPolicy{Base: time.Hour})
		case "parked":
			b.c.Fail(b.ctx, JobRef{m, id, mustInfo(t, cur).Job.Token, 1}, "x", RetryPolicy{MaxAttempts: 1})
		}
	}

	rec := &rangeRecorder{}
	b.c.rdb.AddHook(rec)
	dropped, err := b.c.PurgeUID(b.ctx, Module{m, "new"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range dropped {
		got = append(got, d.ID)
	}
	want := append(slices.Clone(olds), "legacy", "run", "retry", "parked")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("dropped %d ids, want %d", len(got), len(want))
	}
	remaining := b.ids(t, protocol.CheckKey(m))
	if !slices.Equal(remaining, news[1:]) {
		t.Errorf(":check holds %d items, want the %d new-uid ones", len(remaining), len(news))
	}
	n, _ := b.c.Counts(b.ctx, m)
	if n.Run != 0 || n.Retry != 0 || n.Failed != 0 || n.CheckProcessing != 1 || n.Jobs != int64(len(news)) {
		t.Errorf("counts = %+v", n)
	}
	for _, id := range olds {
		if _, ok := b.jobItem(t, m, id); ok {
			t.Fatalf("jobs[%s] kept", id)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, s := range rec.spans {
		if s < 0 || s > purgePage {
			t.Fatalf("purge read a span of %d items in one command, want at most %d", s, purgePage)
		}
	}
	if len(rec.spans) < 3 {
		t.Errorf("only %d range reads: paging not exercised", len(rec.spans))
	}
}
