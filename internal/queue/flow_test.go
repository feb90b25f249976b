package queue

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// TestFlowThroughUpstreamWorker drives jobs end to end: a dispatcher keeps a window of 8
// filled (drive jobs pushed to the front midway), an upstream-style worker checks and runs
// them, and a merger takes, parses and acks each result. Every job is merged exactly once and
// Redis ends empty.
func TestFlowThroughUpstreamWorker(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const m, window, total = "m", 8, 60
	w := &pyWorker{t: t, rdb: b.rdb, module: m, timeout: 60}
	var pending []Item
	for i := range total - 10 {
		pending = append(pending, newItem(fmt.Sprintf("f%02d", i), "u"))
	}
	merged := map[string]int{}
	var order []string
	for step := 0; len(merged) < total; step++ {
		if step > 10000 {
			t.Fatalf("stuck after %d merges", len(merged))
		}
		if step == 20 { // a drive appeared: its 10 jobs go first
			var drive []Item
			for i := range 10 {
				drive = append(drive, newItem(fmt.Sprintf("x%02d", i), "u"))
			}
			b.push(t, m, true, drive...)
		}
		n, err := b.c.Counts(b.ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if k := int(window - n.Window()); k > 0 && len(pending) > 0 {
			k = min(k, len(pending))
			b.push(t, m, false, pending[:k]...)
			pending = pending[k:]
		}
		if item := w.takeCheck(b.ctx); item != "" {
			w.finishCheck(b.ctx, item, mustInfo(t, item).ID[1]%2 == 0) // half need a run
		}
		if b.llen(t, protocol.RunKey(m)) > 0 {
			if item := w.takeRun(b.ctx); item != "" {
				w.finishRun(b.ctx, item, "text of "+mustInfo(t, item).ID)
			}
		}
		for b.llen(t, protocol.DoneKey) > 0 {
			raw, err := b.c.NextDone(b.ctx, time.Second)
			if errors.Is(err, ErrNoDone) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			msg, err := protocol.ParseDone([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			ref, ok := RefOf(msg)
			if !ok {
				t.Fatalf("result without job fields: %s", raw)
			}
			merged[ref.ID]++
			order = append(order, ref.ID)
			if err := b.c.AckDone(b.ctx, raw, &ref); err != nil {
				t.Fatal(err)
			}
		}
	}
	for id, n := range merged {
		if n != 1 {
			t.Errorf("%s merged %d times", id, n)
		}
	}
	n, err := b.c.Counts(b.ctx, m)
	if err != nil || n != (Counts{}) {
		t.Fatalf("counts at the end = %+v, %v; want all zero", n, err)
	}
	for _, k := range []string{protocol.TimeoutsKey, protocol.DoneKey, protocol.DoneProcessingKey} {
		if e, _ := b.rdb.Exists(b.ctx, k).Result(); e != 0 {
			t.Errorf("%s left behind", k)
		}
	}
	// The drive's jobs, pushed at step 20, were all taken before the collection's later ones.
	first := map[string]int{}
	for i, id := range order {
		first[id] = i
	}
	if last := first["x09"]; last > first[fmt.Sprintf("f%02d", total-11)] {
		t.Errorf("drive jobs were not served first: %v", order)
	}
}
