package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Scenario 10, restart with no change: homeindexd restarted with the same MODULES and the same
// files dispatches nothing, counted where it cannot hide: the list and hash writes every
// dispatch makes in Redis (INFO commandstats, which counts commands run inside Lua scripts)
// and the daemon's own "dispatched" debug lines. No module sees a job and no marker is
// rewritten.
func TestS10RestartWithoutChangeDispatchesNothing(t *testing.T) {
	t.Parallel()
	mods := []module{{Name: "example-module", UID: "1"}, {Name: "always", UID: "1"}}
	s := newStack(t, mods)
	ids := []string{s.write("a.txt", "regular a"), s.write("archive/usb/b.txt", "drive b"), s.write("archive/usb/c.txt", "drive c")}
	s.Daemon.Start()
	s.startModule("example", bin.example, "example-module")
	s.startModule("always", bin.crash, "always")
	waitUntil(t, 60*time.Second, "every file through the chain", s.docsDone(ids, noted))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))
	// The queues drain once the last results are merged.
	waitUntil(t, 30*time.Second, "the queues to drain", func() error {
		for _, m := range mods {
			if q, err := s.queuedIDs(m.Name); err != nil || len(q) > 0 {
				return fmt.Errorf("%s queue %v (%v)", m.Name, q, err)
			}
		}
		return nil
	})

	for restart := 1; restart <= 2; restart++ {
		records := len(s.records())
		marker := s.markerStamp("usb")
		calls := s.commandCalls()
		s.Daemon.Restart()
		// Let the new daemon take the lock, sync three times and refill its windows.
		waitUntil(t, 30*time.Second, "three syncs after the restart", func() error {
			log := s.Daemon.LogSinceStart()
			if !strings.Contains(log, "holding the Redis lock") {
				return fmt.Errorf("not active yet")
			}
			if n := strings.Count(log, `"message":"completed file sync"`); n < 3 {
				return fmt.Errorf("%d syncs", n)
			}
			return nil
		})
		after := s.commandCalls()
		for _, cmd := range []string{"hsetnx", "lpush", "rpush", "zadd"} {
			if d := after[cmd] - calls[cmd]; d != 0 {
				t.Fatalf("restart %d: %d %s calls in Redis, want none: something was queued", restart, d, cmd)
			}
		}
		if n := strings.Count(s.Daemon.LogSinceStart(), `"message":"dispatched"`); n != 0 {
			t.Fatalf("restart %d: the daemon logged %d dispatches", restart, n)
		}
		if n := len(s.records()); n != records {
			t.Fatalf("restart %d: modules did %d checks or runs", restart, n-records)
		}
		if got := s.markerStamp("usb"); got != marker {
			t.Fatalf("restart %d: usb marker rewritten: %s, was %s", restart, got, marker)
		}
	}
}
