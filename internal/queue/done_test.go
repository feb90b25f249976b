package queue

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

func TestDoneTakeAckRelease(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	b.push(t, m, false, newItem("a", ""))
	w := &pyWorker{t: t, rdb: b.rdb, module: m, timeout: 60}
	w.finishCheck(b.ctx, w.takeCheck(b.ctx), false)

	raw, err := b.c.NextDone(b.ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if b.llen(t, protocol.DoneKey) != 0 || b.llen(t, protocol.DoneProcessingKey) != 1 {
		t.Fatal("result not moved to modules:done:processing")
	}
	msg, err := protocol.ParseDone([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	ref, ok := RefOf(msg)
	if !ok || ref.ID != "a" || ref.Attempt != 1 {
		t.Fatalf("RefOf = %+v, %v", ref, ok)
	}
	// While the result awaits merge the job is still in flight: no second copy.
	if res, _ := b.c.Push(b.ctx, m, items("", "a"), false); res.Pushed != 0 {
		t.Fatal("job pushed again while its result awaits merge")
	}
	// A stale attempt does not release the job.
	stale := ref
	stale.Attempt = 7
	b.rdb.RPush(b.ctx, protocol.DoneProcessingKey, "other")
	if err := b.c.AckDone(b.ctx, "other", &stale); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.jobItem(t, m, "a"); !ok {
		t.Fatal("a stale ack released the job")
	}
	if err := b.c.AckDone(b.ctx, raw, &ref); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.jobItem(t, m, "a"); ok {
		t.Fatal("ack did not release the job")
	}
	if b.llen(t, protocol.DoneProcessingKey) != 0 {
		t.Fatal("result still pending")
	}
	if err := b.c.AckDone(b.ctx, raw, nil); !errors.Is(err, ErrNotPending) {
		t.Fatalf("second ack: got %v, want ErrNotPending", err)
	}
	if _, err := b.c.NextDone(b.ctx, time.Second); !errors.Is(err, ErrNoDone) {
		t.Fatalf("empty queue: got %v, want ErrNoDone", err)
	}
	b.push(t, m, false, newItem("a", "")) // dispatchable again
}

func TestRestoreDoneReplaysInOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, r := range []string{"r1", "r2", "r3", "r4"} {
		b.rdb.RPush(b.ctx, protocol.DoneKey, r)
	}
	for range 3 { // the daemon took three, then died
		if _, err := b.c.NextDone(b.ctx, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	n, err := b.c.RestoreDone(b.ctx)
	if err != nil || n != 3 {
		t.Fatalf("RestoreDone = %d, %v; want 3", n, err)
	}
	got, _ := b.rdb.LRange(b.ctx, protocol.DoneKey, 0, -1).Result()
	if want := []string{"r1", "r2", "r3", "r4"}; !slices.Equal(got, want) {
		t.Fatalf("modules:done = %v, want %v", got, want)
	}
	if n, err := b.c.RestoreDone(b.ctx); err != nil || n != 0 {
		t.Fatalf("second RestoreDone = %d, %v", n, err)
	}
}

func TestRestoreDoneBatches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	want := make([]string, restoreBatch*2+5)
	args := make([]any, len(want))
	for i := range want {
		want[i] = "r" + time.Duration(i).String()
		args[i] = want[i]
	}
	b.rdb.RPush(b.ctx, protocol.DoneProcessingKey, args...)
	if n, err := b.c.RestoreDone(b.ctx); err != nil || n != len(want) {
		t.Fatalf("RestoreDone = %d, %v", n, err)
	}
	if got, _ := b.rdb.LRange(b.ctx, protocol.DoneKey, 0, -1).Result(); !slices.Equal(got, want) {
		t.Fatal("order changed")
	}
}

func TestQuarantine(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.rdb.RPush(b.ctx, protocol.DoneKey, "{not json")
	raw, err := b.c.NextDone(b.ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.c.Quarantine(b.ctx, raw, "invalid JSON"); err != nil {
		t.Fatal(err)
	}
	if b.llen(t, protocol.DoneProcessingKey) != 0 {
		t.Fatal("result still pending")
	}
	q, err := b.c.Quarantined(b.ctx, 10)
	if err != nil || len(q) != 1 || q[0].Payload != "{not json" || q[0].Reason != "invalid JSON" || q[0].At.IsZero() {
		t.Fatalf("quarantine = %+v, %v", q, err)
	}
	if err := b.c.Quarantine(b.ctx, raw, "again"); !errors.Is(err, ErrNotPending) {
		t.Fatalf("second quarantine: got %v, want ErrNotPending", err)
	}
}

// TestFailFromDoneMessage: a module reports an error in its result (DoneErrorField); the
// merger calls Fail, which retries from check (the item left every list), then acks.
func TestFailFromDoneMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	b.push(t, m, false, newItem("a", ""))
	w := &pyWorker{t: t, rdb: b.rdb, module: m, timeout: 60}
	w.finishCheck(b.ctx, w.takeCheck(b.ctx), true)
	item := w.takeRun(b.ctx)
	raw := `{"module": "m", "document": ` + item + `, "_hi_error": "decoder crashed"}`
	if !w.removeTimeout(b.ctx, protocol.RunKey(m), item) {
		t.Fatal("remove timeout")
	}
	b.rdb.RPush(b.ctx, protocol.DoneKey, raw)

	got, err := b.c.NextDone(b.ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := protocol.ParseDone([]byte(got))
	if err != nil || msg.Error != "decoder crashed" {
		t.Fatalf("ParseDone = %+v, %v", msg, err)
	}
	ref, _ := RefOf(msg)
	out, err := b.c.Fail(b.ctx, ref, "module error: "+msg.Error, now)
	if err != nil || out != OutcomeRequeued {
		t.Fatalf("Fail = %v, %v", out, err)
	}
	if err := b.c.AckDone(b.ctx, got, &ref); err != nil {
		t.Fatal(err)
	}
	cur, ok := b.jobItem(t, m, "a")
	if !ok || mustInfo(t, cur).Job.Attempt != 2 {
		t.Fatalf("jobs[a] = %q, %v; want attempt 2 still in flight", cur, ok)
	}
	// The attempt was in no list any more, so the next one starts at check.
	if got := b.ids(t, protocol.CheckKey(m)); !slices.Equal(got, []string{"a"}) {
		t.Errorf(":check = %v, want the retry", got)
	}
	// Fail of an attempt that is no longer current changes nothing.
	if out, err := b.c.Fail(b.ctx, ref, "late", now); err != nil || out != OutcomeStale {
		t.Fatalf("stale Fail = %v, %v", out, err)
	}
}

// TestFailWhileProcessing: the daemon fails an attempt a worker still holds: its processing
// entry and deadline go, the next attempt waits for its backoff.
func TestFailWhileProcessing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	b.push(t, m, false, newItem("a", ""))
	item := (&pyWorker{t: t, rdb: b.rdb, module: m, timeout: 60}).takeCheck(b.ctx)
	info := mustInfo(t, item)
	out, err := b.c.Fail(b.ctx, JobRef{m, "a", info.Job.Token, 1}, "bad", RetryPolicy{Base: time.Hour})
	if err != nil || out != OutcomeRetrying {
		t.Fatalf("Fail = %v, %v", out, err)
	}
	if b.llen(t, protocol.CheckProcessingKey(m)) != 0 {
		t.Error("processing entry kept")
	}
	if n, _ := b.rdb.ZCard(b.ctx, protocol.TimeoutsKey).Result(); n != 0 {
		t.Error("deadline kept")
	}
	if n, _ := b.rdb.ZCard(b.ctx, protocol.RetryKey(m)).Result(); n != 1 {
		t.Error("next attempt not in the retry set")
	}
}
