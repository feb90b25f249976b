package e2e

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// C5 (docs/invariants.md, fault catalogue): the whole stack gets SIGTERM mid-run (docker compose stop, grace
// 10 s). homeindexd and the module workers each exit with code 0 within 10 s; nothing is left
// in a processing list or the timeouts set (work in flight was finished or handed back); after
// a restart every file completes with nothing lost or merged twice, and the stores agree.
//
// Full: 2,000 files, stopped at a random point between a fifth and four fifths of the run.
// Reduced: 200 files.
func TestFaultC5SigtermMidRun(t *testing.T) {
	t.Parallel()
	const grace = 10 * time.Second
	n := faultSize(200, 2000)
	rng := faultRand(t)
	r := newFaultRun(t, n, 16, []module{{Name: "example-module", UID: "e1"}, {Name: "timeout-module", UID: "t1"}})
	r.Daemon.Start()
	workers := []*proc{
		r.startModule("example", bin.example, "example-module"),
		r.startModule("slow", bin.timeout, "timeout-module", "SLEEP", "0.02"),
	}
	total := n * len(r.mods)
	at := total/5 + rng.IntN(total*3/5)
	waitUntil(t, faultDuration(3*time.Minute, 10*time.Minute), fmt.Sprintf("%d merges", at), func() error {
		if m := r.merged(); m < at {
			return fmt.Errorf("%d merges", m)
		}
		return nil
	})
	all := append([]*proc{r.Daemon}, workers...)
	stopped := time.Now()
	for _, p := range all {
		p.signal(syscall.SIGTERM)
	}
	for _, p := range all {
		if code := p.WaitExit(grace - time.Since(stopped)); code != 0 {
			t.Fatalf("%s: exit code %d after SIGTERM, want 0", p.name, code)
		}
	}
	took := time.Since(stopped)
	mergedAtStop := r.merged()

	ctx := context.Background()
	left := map[string]int64{}
	keys := []string{protocol.DoneProcessingKey}
	for _, m := range r.mods {
		keys = append(keys, protocol.CheckProcessingKey(m), protocol.RunProcessingKey(m))
	}
	for _, k := range keys {
		if n, err := r.Redis.Client().LLen(ctx, k).Result(); err != nil || n > 0 {
			left[k] = n
		}
	}
	if n, err := r.Redis.Client().ZCard(ctx, protocol.TimeoutsKey).Result(); err != nil || n > 0 {
		left[protocol.TimeoutsKey] = n
	}
	if len(left) > 0 {
		t.Fatalf("stranded after every process stopped: %v", left)
	}

	for _, p := range all {
		p.Start()
	}
	r.waitComplete(faultDuration(3*time.Minute, 10*time.Minute))
	r.assertNothingStranded()
	checked := r.assertNoLossNoDoubleMerge()
	r.assertAgree()
	t.Logf("C5: stopped at %d/%d merges; all %d processes exited 0 within %v; 0 stranded; after restart %d/%d complete, 0 lost, 0 double merges",
		mergedAtStop, total, len(all), took.Round(time.Millisecond), checked, n)
}
