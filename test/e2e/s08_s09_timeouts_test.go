package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// Scenario 8, run timeout: a run longer than TIMEOUT is abandoned at its deadline and retried
// (new attempts, same phase); once the module is fixed every file completes, with no failure
// recorded.
func TestS08RunTimeoutIsRetriedUntilFixed(t *testing.T) {
	t.Parallel()
	testTimeoutRetried(t, "run", "SLEEP")
}

// Scenario 9, check timeout: a check longer than TIMEOUT is retried the same way, in the check
// phase; once fixed every file completes.
func TestS09CheckTimeoutIsRetriedUntilFixed(t *testing.T) {
	t.Parallel()
	testTimeoutRetried(t, "check", "CHECK_SLEEP")
}

func testTimeoutRetried(t *testing.T, phase, sleepVar string) {
	const mod = "timeout-module"
	s := newStack(t, []module{{Name: mod, UID: "t1"}}, withDaemonEnv("MAX_ATTEMPTS", "50"))
	ids := []string{s.write("a.txt", "file a"), s.write("archive/usb/b.txt", "file b")}
	s.Daemon.Start()
	worker := s.startModule("timeout", bin.timeout, mod, "TIMEOUT", "0.4", sleepVar, "5")
	waitUntil(t, 60*time.Second, "every file to time out twice in "+phase, func() error {
		got := s.records().where(func(r record) bool { return r.Phase == phase && r.Result == "error" }).countBy(byPath)
		for _, p := range []string{"a.txt", "archive/usb/b.txt"} {
			if got[p] < 2 {
				return fmt.Errorf("timeouts per file %v", got)
			}
		}
		return nil
	})
	timedOut := s.records().where(func(r record) bool { return r.Phase == phase })
	for _, r := range timedOut {
		// Abandoned at the deadline, not finished: the handler saw its context end.
		if r.Result != "error" || !strings.Contains(r.Error, "deadline") || r.EndTime().Sub(r.StartTime()) > 3*time.Second {
			t.Fatalf("a %s before the fix did not end at its deadline: %v", phase, r)
		}
	}
	for _, p := range []string{"a.txt", "archive/usb/b.txt"} {
		attempts := timedOut.where(func(r record) bool { return r.Path == p })
		for i, r := range attempts {
			if r.Attempt != i+1 {
				t.Fatalf("%s: attempt numbers %v, want 1, 2, ...", p, attempts)
			}
		}
	}
	if phase == "run" {
		// Retried in the phase it timed out in: never checked again.
		if checks := s.records().checks().countBy(byPath); checks["a.txt"] != 1 || checks["archive/usb/b.txt"] != 1 {
			t.Fatalf("checks per file %v while runs timed out, want one each", checks)
		}
	}
	if state, _ := s.marker("usb"); state != "pending" {
		t.Fatalf("usb marker %q while its file keeps timing out, want pending", state)
	}

	// The fix: no more sleeping.
	worker.Stop()
	worker.Env[sleepVar] = "0"
	worker.Start()
	waitUntil(t, 60*time.Second, "every file through the chain after the fix", s.docsDone(ids, func(d protocol.Document) error {
		if len(d.Failures) > 0 {
			return fmt.Errorf("failures recorded: %s", d.Failures)
		}
		return nil
	}))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))
	for _, id := range ids {
		if v, err := s.moduleFile(id, mod, "version.json"); err != nil || string(v) != `{"version": 1}` {
			t.Fatalf("%s: version.json %q (%v)", id, v, err)
		}
	}
	runs := s.records().runs().ok()
	if got := runs.countBy(byPath); len(got) != len(ids) || len(runs) != len(ids) {
		t.Fatalf("successful runs %v, want one per file", got)
	}
	if n, err := s.Redis.Client().HLen(context.Background(), mod+":failed").Result(); err != nil || n != 0 {
		t.Fatalf("%s:failed holds %d jobs (%v), want none", mod, n, err)
	}
}

// A job that never completes (every attempt times out) is parked after MAX_ATTEMPTS with its
// reason, in <module>:failed and in the document's failures, and the rest still finish: the
// document moves on to the next module, and the drive's marker becomes ready.
func TestS08S09NeverCompletingJobIsParked(t *testing.T) {
	t.Parallel()
	const stuck = "timeout-module"
	s := newStack(t, []module{{Name: stuck, UID: "t1"}, {Name: "example-module", UID: "e1"}}, withDaemonEnv("MAX_ATTEMPTS", "3"))
	ids := []string{s.write("a.txt", "file a"), s.write("archive/usb/b.txt", "file b"), s.write("archive/usb/c.txt", "file c")}
	s.Daemon.Start()
	s.startModule("timeout", bin.timeout, stuck, "TIMEOUT", "0.2", "SLEEP", "30")
	s.startModule("example", bin.example, "example-module")

	waitUntil(t, 60*time.Second, "every file parked in the stuck module and done in the next", s.docsDone(ids, func(d protocol.Document) error {
		var failures map[string]struct {
			Reason   string `json:"reason"`
			Attempts int    `json:"attempts"`
		}
		if err := json.Unmarshal(d.Failures, &failures); err != nil {
			return fmt.Errorf("failures %s: %w", d.Failures, err)
		}
		f, ok := failures[stuck]
		if !ok || f.Attempts != 3 || !strings.Contains(f.Reason, "timed out") {
			return fmt.Errorf("failures %s, want %s parked after 3 timed-out attempts", d.Failures, stuck)
		}
		return noted(d)
	}))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))

	parked, err := s.Redis.Client().HGetAll(context.Background(), stuck+":failed").Result()
	if err != nil || len(parked) != len(ids) {
		t.Fatalf("%s:failed holds %d jobs (%v), want %d", stuck, len(parked), err, len(ids))
	}
	for _, id := range ids {
		var rec struct {
			Reason   string `json:"reason"`
			Attempts int    `json:"attempts"`
			Phase    string `json:"phase"`
		}
		if err := json.Unmarshal([]byte(parked[id]), &rec); err != nil || rec.Attempts != 3 || !strings.Contains(rec.Reason, "timed out in run") {
			t.Fatalf("parked record of %s: %s (%v)", id, parked[id], err)
		}
	}
	attempts := s.records().module(stuck).runs().countBy(byPath)
	for _, p := range []string{"a.txt", "archive/usb/b.txt", "archive/usb/c.txt"} {
		if attempts[p] != 3 {
			t.Fatalf("run attempts per file %v, want exactly MAX_ATTEMPTS (3) each", attempts)
		}
	}
}
