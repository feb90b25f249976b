package queue

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// park pushes the item and fails its only attempt, so it lands in <m>:failed.
func (b *bundle) park(t *testing.T, m string, it Item) {
	t.Helper()
	b.push(t, m, false, it)
	if out, err := b.c.Fail(b.ctx, JobRef{m, it.ID, it.Token, 1}, "boom", RetryPolicy{MaxAttempts: 1}); err != nil || out != OutcomeParked {
		t.Fatalf("park %s: %v %v", it.ID, out, err)
	}
}

// DropFailed deletes a parked record only while it still carries the dispatch token given:
// a job parked again under a new token is kept.
func TestDropFailedChecksTheToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	a, c := newItem("a", ""), newItem("c", "")
	b.park(t, m, a)
	b.park(t, m, c)
	n, err := b.c.DropFailed(b.ctx, m, map[string]string{"a": a.Token, "c": "another-token", "zz": ""})
	if err != nil || n != 1 {
		t.Fatalf("DropFailed = %d, %v; want 1 (only a)", n, err)
	}
	ids, err := b.c.FailedIDs(b.ctx, m)
	if err != nil || len(ids) != 1 || ids[0] != "c" {
		t.Fatalf("parked left %v (%v), want [c]", ids, err)
	}
	if n, err := b.c.DropFailed(b.ctx, m, map[string]string{"c": ""}); err != nil || n != 1 {
		t.Fatalf("DropFailed any token = %d, %v; want 1", n, err)
	}
}

// TrimQuarantine keeps the newest records and counts the dropped ones; ClearQuarantine with a
// module removes only the records whose payload names it.
func TestQuarantineBoundAndClear(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i, mod := range []string{"m1", "m2", "m1", "m2", "m1"} {
		raw := `{"module":"` + mod + `","document":{"n":` + string(rune('0'+i)) + `}}`
		b.rdb.RPush(b.ctx, protocol.DoneProcessingKey, raw)
		if err := b.c.Quarantine(b.ctx, raw, "bad "+mod); err != nil {
			t.Fatal(err)
		}
	}
	n, err := b.c.TrimQuarantine(b.ctx, 3)
	if err != nil || n != 2 {
		t.Fatalf("TrimQuarantine = %d, %v; want 2", n, err)
	}
	kept, dropped, err := b.c.QuarantineCounts(b.ctx)
	if err != nil || kept != 3 || dropped != 2 {
		t.Fatalf("counts = %d kept, %d dropped (%v); want 3, 2", kept, dropped, err)
	}
	newest, err := b.c.QuarantinedNewest(b.ctx, 1)
	if err != nil || len(newest) != 1 || !json.Valid([]byte(newest[0].Payload)) || QuarantineModule(newest[0]) != "m1" ||
		newest[0].Payload != `{"module":"m1","document":{"n":4}}` {
		t.Fatalf("newest = %+v (%v), want the last m1 record", newest, err)
	}
	if n, err := b.c.ClearQuarantine(b.ctx, "m1"); err != nil || n != 2 {
		t.Fatalf("ClearQuarantine(m1) = %d, %v; want 2", n, err)
	}
	if n, err := b.c.ClearQuarantine(b.ctx, ""); err != nil || n != 1 {
		t.Fatalf("ClearQuarantine() = %d, %v; want the 1 m2 record left", n, err)
	}
	if kept, _, _ := b.c.QuarantineCounts(b.ctx); kept != 0 {
		t.Fatalf("%d records kept after clearing, want 0", kept)
	}
}

// OldestWaiting is the first dispatch time of the oldest item waiting in :check or :run.
func TestOldestWaiting(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m = "m"
	if _, ok, err := b.c.OldestWaiting(b.ctx, m); err != nil || ok {
		t.Fatalf("empty queues: ok %v (%v), want false", ok, err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	newer, older := newItem("a", ""), newItem("b", "")
	newer.Since, older.Since = old.Add(time.Minute), old
	b.push(t, m, false, newer, older)
	got, ok, err := b.c.OldestWaiting(b.ctx, m)
	if err != nil || !ok || !got.Equal(old) {
		t.Fatalf("OldestWaiting = %v %v (%v), want %v", got, ok, err, old)
	}
}
