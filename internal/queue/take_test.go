package queue

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// NextDones takes waiting results in order, at most max of them and at most maxBytes in all
// (but always one), and quarantines a result over maxBytes inside Redis: it is never returned.
func TestNextDonesBatchesAndQuarantinesOversized(t *testing.T) {
	t.Parallel()
	b := setup(t)
	big := `{"module":"m","blob":"` + strings.Repeat("x", 200) + `"}`
	for _, r := range []string{`{"n":1}`, `{"n":2}`, big, `{"n":3}`, `{"n":4}`, `{"n":5}`} {
		if err := b.rdb.RPush(b.ctx, protocol.DoneKey, r).Err(); err != nil {
			t.Fatal(err)
		}
	}
	taken, err := b.c.NextDones(b.ctx, time.Second, 4, 100)
	if err != nil {
		t.Fatal(err)
	}
	// Four looked at: n1, n2, the big one (quarantined), n3.
	if got := strings.Join(taken.Results, " "); got != `{"n":1} {"n":2} {"n":3}` {
		t.Fatalf("taken %s", got)
	}
	if len(taken.Oversized) != 1 || !strings.Contains(taken.Oversized[0], "payload too large: 224 bytes, limit 100") {
		t.Fatalf("oversized reasons %q", taken.Oversized)
	}
	if n := b.llen(t, protocol.DoneProcessingKey); n != 3 {
		t.Fatalf("%d results in modules:done:processing, want 3", n)
	}
	recs, err := b.c.Quarantined(b.ctx, 10)
	if err != nil || len(recs) != 1 || recs[0].Payload != big || recs[0].At.IsZero() ||
		!strings.Contains(recs[0].Reason, "payload too large") {
		t.Fatalf("quarantine %+v, %v", recs, err)
	}
	// The byte budget: n4 and n5 are 7 bytes each; a budget of 10 takes one at a time.
	for _, want := range []string{`{"n":4}`, `{"n":5}`} {
		taken, err := b.c.NextDones(b.ctx, time.Second, 64, 10)
		if err != nil || len(taken.Results) != 1 || taken.Results[0] != want {
			t.Fatalf("taken %+v, %v; want %s alone", taken, err, want)
		}
	}
	// Nothing left: ErrNoDone after the timeout.
	if _, err := b.c.NextDones(b.ctx, 50*time.Millisecond, 64, 100); !errors.Is(err, ErrNoDone) {
		t.Fatalf("empty queue: %v, want ErrNoDone", err)
	}
}

// A result pushed while NextDones polls an empty list is taken.
func TestNextDonesWaitsForAResult(t *testing.T) {
	t.Parallel()
	b := setup(t)
	type res struct {
		taken Taken
		err   error
	}
	got := make(chan res, 1)
	go func() {
		t, err := b.c.NextDones(b.ctx, 10*time.Second, 64, 1<<20)
		got <- res{t, err}
	}()
	// Most often the poller has found the list empty by now and is backing off.
	if err := b.rdb.RPush(b.ctx, protocol.DoneKey, `{"late":true}`).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.err != nil || len(r.taken.Results) != 1 || r.taken.Results[0] != `{"late":true}` {
			t.Fatalf("taken %+v, %v", r.taken, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("NextDones did not return the result")
	}
}
