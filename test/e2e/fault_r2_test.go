package e2e

import (
	"fmt"
	"testing"
	"time"
)

// R2 (docs/invariants.md, fault catalogue): Redis loses its data mid-run (FLUSHALL). homeindexd notices the
// missing epoch, says so in exactly one clear log line, dispatches every job it had in flight
// again from the catalog, and every file completes with nothing lost or merged twice; nothing
// is left in Redis and the stores agree.
//
// Full: 10,000 files. Reduced: 200 files.
func TestFaultR2FlushallMidRun(t *testing.T) {
	t.Parallel()
	const lostLine = `"message":"redis lost its data (epoch changed): re-dispatching every job in flight from the catalog"`
	n := faultSize(200, 10000)
	rng := faultRand(t)
	r := newFaultRun(t, n, 32, []module{{Name: "example-module", UID: "e1"}, {Name: "timeout-module", UID: "t1"}})
	r.Daemon.Start()
	r.startModule("example", bin.example, "example-module")
	r.startModule("second", bin.timeout, "timeout-module")
	total := n * len(r.mods)
	at := total/5 + rng.IntN(total*3/5)
	waitUntil(t, faultDuration(3*time.Minute, 10*time.Minute), fmt.Sprintf("%d merges", at), func() error {
		if m := r.merged(); m < at {
			return fmt.Errorf("%d merges", m)
		}
		return nil
	})
	inFlight := r.count(`SELECT count(*) FROM jobs WHERE state = 'queued'`)
	r.Redis.Flush()
	flushed := time.Now()
	waitUntil(t, 30*time.Second, "the daemon noticing", func() error {
		if logLines(r.Daemon.Log(), lostLine) == 0 {
			return fmt.Errorf("no %s", lostLine)
		}
		return nil
	})
	noticed := time.Since(flushed)
	r.waitComplete(faultDuration(3*time.Minute, 20*time.Minute))
	if got := logLines(r.Daemon.Log(), lostLine); got != 1 {
		t.Fatalf("%d lines say Redis lost its data, want exactly 1", got)
	}
	r.assertNothingStranded()
	checked := r.assertNoLossNoDoubleMerge()
	r.assertAgree()
	t.Logf("R2: FLUSHALL at %d/%d merges with %d jobs in flight; noticed after %v (one log line); %d/%d files complete, 0 lost, 0 double merges",
		at, total, inFlight, noticed.Round(time.Millisecond), checked, n)
}
