package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// R1 (docs/invariants.md, fault catalogue): redis-server, with appendonly yes and appendfsync everysec (so each
// kill may lose up to a second of writes), is killed with SIGKILL at random points of a run and
// restarted on its data. Every file completes with nothing lost or merged twice; nothing is
// left in Redis; the stores agree.
//
// Full: 10 kills over 10,000 files. Reduced: 3 kills over 500 files.
func TestFaultR1RedisKilledEverysec(t *testing.T) {
	t.Parallel()
	n, kills := faultSize(500, 10000), faultSize(3, 10)
	rng := faultRand(t)
	r := newFaultRun(t, n, 32, []module{{Name: "example-module", UID: "e1"}, {Name: "timeout-module", UID: "t1"}},
		withRedisArgs("--appendfsync", "everysec"))
	r.Daemon.Start()
	r.startModule("example", bin.example, "example-module")
	r.startModule("second", bin.timeout, "timeout-module")
	total := n * len(r.mods)
	var points []int
	for range kills {
		points = append(points, 1+rng.IntN(total*9/10))
	}
	slices.Sort(points)
	start := time.Now()
	for i, p := range points {
		waitUntil(t, faultDuration(3*time.Minute, 10*time.Minute), fmt.Sprintf("%d merges (kill %d)", p, i+1), func() error {
			if m := r.merged(); m < p {
				return fmt.Errorf("%d merges", m)
			}
			return nil
		})
		before := r.merged()
		r.Redis.Kill()
		r.Redis.Restart()
		restarted := time.Now()
		waitUntil(t, 2*time.Minute, fmt.Sprintf("merging again after Redis kill %d", i+1), func() error {
			if m := r.merged(); m <= before && r.complete() != nil {
				return fmt.Errorf("%d merges, %d at the kill", m, before)
			}
			return nil
		})
		t.Logf("redis kill %d at %d merges; merging again %v after its restart", i+1, before, time.Since(restarted).Round(time.Millisecond))
	}
	r.waitComplete(faultDuration(5*time.Minute, 30*time.Minute))
	elapsed := time.Since(start)
	r.assertNothingStranded()
	checked := r.assertNoLossNoDoubleMerge()
	r.assertAgree()
	extra, _ := r.extraRuns()
	t.Logf("R1: %d/%d files complete, 0 lost, 0 double merges, %d Redis kills, %d extra module runs; %v in all",
		checked, n, kills, extra, elapsed.Round(time.Second))
}
