package e2e

import (
	"fmt"
	"testing"
	"time"
)

// R3 (docs/invariants.md, fault catalogue): Redis is unreachable (its process gone, the port refusing
// connections) for a while mid-run. homeindexd does not exit, does not busy-loop (its CPU time
// over the outage, read from /proc/<pid>/stat, stays under 5% of one core) and merges again
// within 5 s of Redis returning; every file then completes with nothing lost or merged twice.
//
// The daemon runs with the production sync schedule (CRON_EXPRESSION's default, daily) rather
// than the suite's one sync a second, whose walks would cost CPU with or without Redis. The CPU
// window starts once the work already merged is written out (the outbox is empty: documents
// and index entries of results merged before the outage, which needs no Redis) and lasts at
// least minWindow, the outage being stretched if needed.
//
// Full: a 60 s outage over 2,000 files. Reduced: 10 s over 300 files.
func TestFaultR3RedisUnreachable(t *testing.T) {
	t.Parallel()
	const (
		maxCPU    = 0.05
		maxResume = 5 * time.Second
		minWindow = 5 * time.Second
	)
	n, outage := faultSize(300, 2000), faultDuration(10*time.Second, 60*time.Second)
	r := newFaultRun(t, n, 16, []module{{Name: "example-module", UID: "e1"}, {Name: "timeout-module", UID: "t1"}},
		withDaemonEnv("CRON_EXPRESSION", "0 2 * * *"))
	r.Daemon.Start()
	r.startModule("example", bin.example, "example-module")
	r.startModule("second", bin.timeout, "timeout-module", "SLEEP", "0.01")
	total := n * len(r.mods)
	waitUntil(t, faultDuration(2*time.Minute, 10*time.Minute), "a quarter of the run", func() error {
		if m := r.merged(); m < total/4 {
			return fmt.Errorf("%d of %d merged", m, total)
		}
		return nil
	})
	pid := r.Daemon.pid()
	r.Redis.Kill()
	down := time.Now()
	waitUntil(t, outage+time.Minute, "the merged work written out", func() error {
		if n := r.count(`SELECT count(*) FROM outbox WHERE meta_done = 0 OR index_done = 0`); n != 0 {
			return fmt.Errorf("%d outbox entries", n)
		}
		return nil
	})
	cpu0, measured := cpuTime(t, pid), time.Now()
	// The outage lasts its full length; the poll only watches that the daemon stays up.
	waitUntil(t, outage+2*time.Minute, fmt.Sprintf("a %v outage", outage), func() error {
		if !r.Daemon.Running() {
			t.Fatalf("homeindexd exited (code %d) during the Redis outage", r.Daemon.ExitCode())
		}
		if d := time.Since(down); d < outage {
			return fmt.Errorf("down for %v", d.Round(time.Second))
		}
		if w := time.Since(measured); w < minWindow {
			return fmt.Errorf("measured for %v", w.Round(time.Second))
		}
		return nil
	})
	cpu, window := cpuTime(t, pid)-cpu0, time.Since(measured)
	downFor := time.Since(down)
	share := cpu.Seconds() / window.Seconds()
	before := r.merged()
	r.Redis.Restart()
	back := time.Now()
	waitUntil(t, 2*time.Minute, "merging again", func() error {
		if m := r.merged(); m <= before {
			return fmt.Errorf("%d merges, %d during the outage", m, before)
		}
		return nil
	})
	resumed := time.Since(back)
	if share >= maxCPU {
		t.Errorf("homeindexd used %v of CPU over %v of a Redis outage (%.1f%%), want under %.0f%%", cpu, window.Round(time.Millisecond), share*100, maxCPU*100)
	}
	if resumed > maxResume {
		t.Errorf("first merge %v after Redis returned, want within %v", resumed.Round(time.Millisecond), maxResume)
	}
	r.waitComplete(faultDuration(3*time.Minute, 10*time.Minute))
	r.assertNothingStranded()
	checked := r.assertNoLossNoDoubleMerge()
	r.assertAgree()
	t.Logf("R3: Redis down %v: daemon CPU %v over its last %v (%.2f%%), still running; merging again %v after Redis returned; %d/%d complete, 0 lost, 0 double merges",
		downFor.Round(time.Millisecond), cpu, window.Round(time.Millisecond), share*100, resumed.Round(time.Millisecond), checked, n)
}
