package queue

import (
	"slices"
	"testing"

	"github.com/homeindex/homeindex/protocol"
)

func TestPushDedupAndOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "ocr"
	b.push(t, m, false, items("u", "a", "b", "c")...)

	// The same jobs again, even under new tokens: all skipped, nothing queued twice.
	res, err := b.c.Push(b.ctx, m, items("u", "b", "a", "c", "c"), false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pushed != 0 || !slices.Equal(res.Skipped, []string{"b", "a", "c", "c"}) {
		t.Fatalf("re-push: got %+v, want all skipped", res)
	}

	// A drive appeared: its jobs go before everything not yet dispatched, in the given order.
	b.push(t, m, true, items("u", "d1", "d2")...)
	if got, want := b.ids(t, protocol.CheckKey(m)), []string{"d1", "d2", "a", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf(":check = %v, want %v", got, want)
	}

	// Duplicates within one call: the first wins.
	res, err = b.c.Push(b.ctx, m, items("u", "e", "e"), false)
	if err != nil || res.Pushed != 1 || !slices.Equal(res.Skipped, []string{"e"}) {
		t.Fatalf("duplicate in one call: got %+v, %v", res, err)
	}
	n, err := b.c.Counts(b.ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if n.Check != 6 || n.Jobs != 6 || n.Window() != 6 {
		t.Errorf("counts = %+v, want 6 queued and 6 jobs", n)
	}
	item, ok := b.jobItem(t, m, "a")
	if !ok || mustInfo(t, item).Job.Attempt != 1 || mustInfo(t, item).UID != "u" {
		t.Errorf("jobs[a] = %q, %v", item, ok)
	}
}

func TestPushFrontKeepsOrderAcrossBatches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.push(t, "m", false, newItem("old", ""))
	var ids []string
	for i := range pushBatch + 3 {
		ids = append(ids, "f"+string(rune('a'+i/26/26%26))+string(rune('a'+i/26%26))+string(rune('a'+i%26)))
	}
	b.push(t, "m", true, items("", ids...)...)
	got := b.ids(t, protocol.CheckKey("m"))
	if want := append(slices.Clone(ids), "old"); !slices.Equal(got, want) {
		t.Fatalf("front push of %d items: order broken (head %v…, tail …%v)", len(ids), got[:3], got[len(got)-3:])
	}
}

func TestPushRejects(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.c.Push(b.ctx, "Bad:name", items("", "a"), false); err == nil {
		t.Error("invalid module name: got no error")
	}
	bad := newItem("a", "")
	bad.Token = ""
	if _, err := b.c.Push(b.ctx, "m", []Item{bad}, false); err == nil {
		t.Error("empty token: got no error")
	}
	if n := b.llen(t, protocol.CheckKey("m")); n != 0 {
		t.Errorf("rejected push queued %d items", n)
	}
}

func TestWindowCountsFourLists(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	b.push(t, m, false, items("", "a", "b", "c", "d", "e")...)
	w := &pyWorker{t: t, rdb: b.rdb, module: m, timeout: 60}
	a := w.takeCheck(b.ctx) // a: check:processing
	bItem := w.takeCheck(b.ctx)
	w.finishCheck(b.ctx, bItem, true) // b: run
	c := w.takeCheck(b.ctx)
	w.finishCheck(b.ctx, c, true)
	w.takeRun(b.ctx)                                // b: run:processing; c stays in run
	w.finishCheck(b.ctx, w.takeCheck(b.ctx), false) // d: done (out of the window)
	_ = a
	n, err := b.c.Counts(b.ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	want := Counts{Check: 1, CheckProcessing: 1, Run: 1, RunProcessing: 1, Jobs: 5}
	if n != want {
		t.Fatalf("counts = %+v, want %+v", n, want)
	}
	if got, err := b.c.InFlight(b.ctx, m); err != nil || got != 4 {
		t.Fatalf("InFlight = %d, %v; want 4", got, err)
	}
}

func TestWithdraw(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	b.push(t, m, false, items("", "a", "b", "c", "d")...)
	w := &pyWorker{t: t, rdb: b.rdb, module: m, timeout: 60}
	w.takeCheck(b.ctx)                             // a started: stays
	w.finishCheck(b.ctx, w.takeCheck(b.ctx), true) // b waits in :run: withdrawn

	got, err := b.c.Withdraw(b.ctx, m, []string{"a", "b", "c", "zz"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("withdrawn %v, want %v", got, want)
	}
	if got := b.ids(t, protocol.CheckKey(m)); !slices.Equal(got, []string{"d"}) {
		t.Errorf(":check = %v, want [d]", got)
	}
	if n := b.llen(t, protocol.RunKey(m)); n != 0 {
		t.Errorf(":run has %d items, want 0", n)
	}
	for id, want := range map[string]bool{"a": true, "b": false, "c": false, "d": true} {
		if _, ok := b.jobItem(t, m, id); ok != want {
			t.Errorf("jobs[%s] present = %v, want %v", id, ok, want)
		}
	}
	// The drive came back: withdrawn jobs can be pushed again, to the front.
	b.push(t, m, true, items("", "b", "c")...)
	if got := b.ids(t, protocol.CheckKey(m)); !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Errorf(":check = %v, want [b c d]", got)
	}
}

func TestWithdrawFromRetrySet(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	b.push(t, m, false, newItem("a", ""))
	item, _ := b.jobItem(t, m, "a")
	info := mustInfo(t, item)
	if _, err := b.c.Fail(b.ctx, JobRef{m, "a", info.Job.Token, 1}, "boom", RetryPolicy{Base: 1e12}); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.rdb.ZCard(b.ctx, protocol.RetryKey(m)).Result(); n != 1 {
		t.Fatalf("retry set has %d members, want 1", n)
	}
	got, err := b.c.Withdraw(b.ctx, m, []string{"a"})
	if err != nil || !slices.Equal(got, []string{"a"}) {
		t.Fatalf("withdraw = %v, %v", got, err)
	}
	if n, _ := b.rdb.ZCard(b.ctx, protocol.RetryKey(m)).Result(); n != 0 {
		t.Errorf("retry set has %d members after withdraw", n)
	}
}
