package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// C2 (docs/invariants.md, fault catalogue): module workers of both modules are killed with SIGKILL at random
// points and restarted; the reaper requeues what they held once its deadline (TIMEOUT) passes.
// Nothing is lost, nothing merged twice, nothing stranded, the stores agree, and the runs
// started beyond one per file and module (counted from the workers' logs, killed runs
// included) are at most the number of kills.
//
// Full: 50 kills over 2,000 files. Reduced: 10 kills over 200 files.
func TestFaultC2ModuleWorkersKilled(t *testing.T) {
	t.Parallel()
	n, kills := faultSize(200, 2000), faultSize(10, 50)
	rng := faultRand(t)
	r := newFaultRun(t, n, 16, []module{{Name: "timeout-module", UID: "t1"}, {Name: "example-module", UID: "e1"}})
	r.Daemon.Start()
	// A short run sleep makes most kills land inside a run; TIMEOUT bounds the requeue delay.
	workers := []*proc{
		r.startModule("slow", bin.timeout, "timeout-module", "SLEEP", "0.02", "TIMEOUT", "2"),
		r.startModule("example", bin.example, "example-module", "TIMEOUT", "2"),
	}
	total := n * len(r.mods)
	var points []int
	for range kills {
		points = append(points, rng.IntN(total*9/10))
	}
	slices.Sort(points)
	for i, p := range points {
		waitUntil(t, faultDuration(3*time.Minute, 10*time.Minute), fmt.Sprintf("%d merges (kill %d)", p, i+1), func() error {
			if m := r.merged(); m < p {
				return fmt.Errorf("%d merges", m)
			}
			return nil
		})
		w := workers[rng.IntN(len(workers))]
		w.Kill()
		w.Start()
	}
	r.waitComplete(faultDuration(5*time.Minute, 20*time.Minute))
	r.assertNothingStranded()
	checked := r.assertNoLossNoDoubleMerge()
	extra, detail := r.extraRuns()
	if extra > kills {
		t.Fatalf("%d runs beyond one per file and module, after %d kills; want at most one per kill:\n%v", extra, kills, detail)
	}
	r.assertAgree()
	t.Logf("C2: %d/%d files complete, 0 lost, 0 double merges, %d kills, %d re-runs", checked, n, kills, extra)
}
