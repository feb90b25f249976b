package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// C1 (docs/invariants.md, fault catalogue): homeindexd is killed with SIGKILL at random points of a run with two
// modules (the first kill during its start-up sync, the others at random merge counts) and
// restarted each time. Every file completes, none is lost, no result is merged twice, every
// document.json parses and carries the example module's note, nothing is left in Redis, and
// the catalog, the metadata directory and the index agree exactly.
//
// Full: 10,000 files, 20 kills. Reduced: 600 files, 4 kills.
func TestFaultC1DaemonKilledAtRandomPoints(t *testing.T) {
	t.Parallel()
	n, kills := faultSize(600, 10000), faultSize(4, 20)
	rng := faultRand(t)
	r := newFaultRun(t, n, 32, []module{{Name: "example-module", UID: "e1"}, {Name: "timeout-module", UID: "t1"}})
	r.Daemon.Start()
	r.startModule("example", bin.example, "example-module")
	r.startModule("second", bin.timeout, "timeout-module")

	// Kill points: the first while the start-up sync runs, the others at random merge counts.
	total := n * len(r.mods)
	points := []int{0}
	for range kills - 1 {
		points = append(points, rng.IntN(total*9/10))
	}
	slices.Sort(points)
	start := time.Now()
	var resumes []time.Duration
	for i, p := range points {
		if i == 0 {
			waitUntil(t, 60*time.Second, "the start-up sync under way", func() error {
				if !strings.Contains(r.Daemon.LogSinceStart(), `"message":"start file sync"`) {
					return fmt.Errorf("no sync started")
				}
				return nil
			})
		} else {
			waitUntil(t, faultDuration(3*time.Minute, 10*time.Minute), fmt.Sprintf("%d merges (kill %d)", p, i+1), func() error {
				if m := r.merged(); m < p {
					return fmt.Errorf("%d merges", m)
				}
				return nil
			})
		}
		before := r.merged()
		r.Daemon.Kill()
		killedAt := time.Now()
		r.Daemon.Start()
		// Resumed: a merge after the restart (the restarted daemon first waits for the dead
		// one's Redis lock to expire).
		waitUntil(t, 2*time.Minute, fmt.Sprintf("merging again after kill %d", i+1), func() error {
			if m := r.merged(); m <= max(before, 0) {
				if r.complete() == nil {
					return nil
				}
				return fmt.Errorf("%d merges, %d before the kill", m, before)
			}
			return nil
		})
		resumes = append(resumes, time.Since(killedAt))
		t.Logf("kill %d at %d merges (target %d); merging again %v later", i+1, before, p, time.Since(killedAt).Round(time.Millisecond))
	}
	r.waitComplete(faultDuration(5*time.Minute, 30*time.Minute))
	elapsed := time.Since(start)

	r.assertNothingStranded()
	checked := r.assertNoLossNoDoubleMerge()
	for _, id := range r.ids {
		d, err := r.doc(id)
		if err != nil {
			t.Fatal(err)
		}
		if err := noted(d); err != nil {
			t.Fatalf("document %s: %v", id, err)
		}
	}
	r.assertAgree()
	extra, _ := r.extraRuns()
	t.Logf("C1: %d/%d files complete, 0 lost, 0 double merges, %d kills, %d extra module runs, resume after kill: max %v; %v in all",
		checked, n, kills, extra, slices.Max(resumes).Round(time.Millisecond), elapsed.Round(time.Second))
}
