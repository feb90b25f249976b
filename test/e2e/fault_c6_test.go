package e2e

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
)

// C6 (docs/invariants.md, fault catalogue): two homeindexd processes share one Redis (and the same volumes, as a
// duplicated container would). Exactly one holds the Redis lock and runs the module pipeline
// (dispatcher, reaper, merger); the other waits as a standby and dispatches nothing. When the
// active one is killed (SIGKILL), the standby takes over within the lock's TTL, and every file
// completes with nothing lost or merged twice.
//
// Full: 2,000 files. Reduced: 200 files.
func TestFaultC6TwoDaemonsOneActs(t *testing.T) {
	t.Parallel()
	const (
		active      = `"message":"holding the Redis lock: this daemon is active"`
		standby     = `"message":"standby: another homeindexd holds the Redis lock; waiting to take over"`
		dispatched  = `"message":"dispatched"`
		lockTTL     = 15 * time.Second // internal/app's lockTTL
		takeoverMax = lockTTL + 5*time.Second
	)
	n := faultSize(200, 2000)
	r := newFaultRun(t, n, 16, []module{{Name: "example-module", UID: "e1"}, {Name: "timeout-module", UID: "t1"}})
	a := r.Daemon
	env := maps.Clone(a.Env)
	env["HTTP_ADDR"] = freeAddr(t)
	b := newProc(t, r.Logs, "homeindexd-b", bin.homeindexd, []string{"run"}, env)

	a.Start()
	waitUntil(t, 60*time.Second, "the first daemon active", logHas(a, active))
	b.Start()
	waitUntil(t, 60*time.Second, "the second daemon on standby", logHas(b, standby))
	r.startModule("example", bin.example, "example-module")
	r.startModule("slow", bin.timeout, "timeout-module", "SLEEP", "0.01")

	total := n * len(r.mods)
	waitUntil(t, faultDuration(2*time.Minute, 10*time.Minute), "half the results merged", func() error {
		if m := r.merged(); m < total/2 {
			return fmt.Errorf("%d of %d merged", m, total)
		}
		return nil
	})
	if got := logLines(b.Log(), active); got != 0 {
		t.Fatalf("the standby logged %d times that it is active while the first daemon runs", got)
	}
	if got := logLines(b.Log(), dispatched); got != 0 {
		t.Fatalf("the standby dispatched %d times while the first daemon runs", got)
	}
	if got := logLines(a.Log(), dispatched); got == 0 {
		t.Fatal("the active daemon never logged a dispatch")
	}
	if got := logLines(a.Log(), active); got != 1 {
		t.Fatalf("the first daemon became active %d times, want 1", got)
	}

	a.Kill()
	killed := time.Now()
	waitUntil(t, takeoverMax+10*time.Second, "the standby taking over", logHas(b, active))
	takeover := time.Since(killed)
	if takeover > takeoverMax {
		t.Fatalf("the standby took over %v after the active daemon died, want within the lock TTL (%v) plus 5 s", takeover, lockTTL)
	}
	r.Daemon = b // the stack's checks stop this one
	r.waitComplete(faultDuration(3*time.Minute, 10*time.Minute))
	if got := logLines(b.Log(), dispatched); got == 0 {
		t.Fatal("the new active daemon never dispatched")
	}
	r.assertNothingStranded()
	checked := r.assertNoLossNoDoubleMerge()
	r.assertAgree()
	t.Logf("C6: standby idle while the other was active (0 dispatches); took over %v after the kill; %d/%d files complete, 0 lost, 0 double merges",
		takeover.Round(time.Millisecond), checked, n)
}

// logHas is a waitUntil condition: the current incarnation of p logged substr.
func logHas(p *proc, substr string) func() error {
	return func() error {
		if !strings.Contains(p.LogSinceStart(), substr) {
			return fmt.Errorf("%s has not logged %s", p.name, substr)
		}
		return nil
	}
}
