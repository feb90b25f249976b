package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// Nothing is lost (DESIGN invariant 1): homeindexd, the module and redis-server are each killed
// with SIGKILL while files are being processed, and restarted; every file still ends with the
// module's output merged, no failure recorded, and the drive's marker ready. The restarted
// daemon waits for the dead one's Redis lock to expire (its TTL), as a standby would.
func TestKilledProcessesLoseNothing(t *testing.T) {
	t.Parallel()
	const mod = "example-module"
	// The slow module runs first so the kills land mid-run; example-module proves the merge.
	s := newStack(t, []module{{Name: "timeout-module", UID: "t1"}, {Name: mod, UID: "e1"}}, withDaemonEnv("DISPATCH_WINDOW", "3"))
	var ids []string
	for i := range 8 {
		ids = append(ids, s.write(fmt.Sprintf("archive/usb/f%d.txt", i), fmt.Sprintf("drive file %d", i)))
		ids = append(ids, s.write(fmt.Sprintf("r%d.txt", i), fmt.Sprintf("regular file %d", i)))
	}
	s.Daemon.Start()
	slow := s.startModule("slow", bin.timeout, "timeout-module", "SLEEP", "0.1", "TIMEOUT", "2")
	s.startModule("example", bin.example, mod)
	runsAtLeast := func(n int) func() error {
		return func() error {
			if got := len(s.records().module("timeout-module").runs()); got < n {
				return fmt.Errorf("%d runs", got)
			}
			return nil
		}
	}

	waitUntil(t, 30*time.Second, "a few runs", runsAtLeast(3))
	s.Daemon.Kill()
	s.Daemon.Start()

	waitUntil(t, 60*time.Second, "runs after the daemon's restart", runsAtLeast(6))
	slow.Kill() // mid-job: its item stays in a processing list until its deadline
	slow.Start()

	waitUntil(t, 30*time.Second, "runs after the module's restart", runsAtLeast(9))
	s.Redis.Kill() // append-only, fsync always: every acknowledged write survives
	s.Redis.Restart()

	waitUntil(t, 120*time.Second, "every file through the chain", s.docsDone(ids, func(d protocol.Document) error {
		if len(d.Failures) > 0 {
			return fmt.Errorf("failures %s", d.Failures)
		}
		return noted(d)
	}))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))
	if got := s.records().module("timeout-module").runs().ok().countBy(byPath); len(got) != len(ids) {
		t.Fatalf("timeout-module completed %d files, want %d", len(got), len(ids))
	}
}
