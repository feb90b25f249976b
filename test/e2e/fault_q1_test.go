package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// Q1: one poison file, on an archive drive, among n (100 reduced, 1,000 full) crashes its
// module's process on every run (crash-module with CRASH_ON); the test restarts the process
// each time, as a container runtime would. The poison job runs exactly MAX_ATTEMPTS times, is
// parked in <module>:failed and in its document's `failures` with its reason, the n-1 others
// complete, and the drive's marker still reaches ready.
func TestFaultQ1PoisonFileParked(t *testing.T) {
	t.Parallel()
	const (
		mod         = "crash-module"
		maxAttempts = 5
	)
	s := newStack(t, []module{{Name: mod, UID: "c1"}}, withDaemonEnv("DISPATCH_WINDOW", "32", "MAX_ATTEMPTS", fmt.Sprint(maxAttempts)))
	n := qsSize(100, 1000)
	var others []string
	for i := range n - 1 {
		rel := fmt.Sprintf("dir%02d/file%04d.txt", i%10, i)
		if i%4 == 0 {
			rel = fmt.Sprintf("archive/usb/file%04d.txt", i)
		}
		others = append(others, s.write(rel, fmt.Sprintf("q1 file %d", i)))
	}
	poison := s.write("archive/usb/poison.bin", "q1 poison")
	started := time.Now()
	s.Daemon.Start()
	w := s.startModule("worker1", bin.crash, mod, "CRASH_ON", "poison", "TIMEOUT", "3")
	crashes := 0
	// supervise restarts the module after each crash (restart: always); only the poison file
	// may crash it.
	supervise := func() {
		if w.Running() {
			return
		}
		if code := w.ExitCode(); code != 1 {
			t.Fatalf("crash-module exited with %d, want 1 (a crash)", code)
		}
		crashes++
		if crashes > maxAttempts {
			t.Fatalf("crash-module crashed %d times, more than MAX_ATTEMPTS (%d)", crashes, maxAttempts)
		}
		w.Start()
	}
	superviseWhile := func(cond func() error) func() error {
		return func() error { supervise(); return cond() }
	}
	rdb, ctx := s.Redis.Client(), context.Background()
	waitUntil(t, time.Duration(120+n/5)*time.Second, "the poison file parked", superviseWhile(func() error {
		raw, err := rdb.HGet(ctx, protocol.FailedKey(mod), poison).Result()
		if err != nil {
			return fmt.Errorf("%s has no entry for the poison file (%v)", protocol.FailedKey(mod), err)
		}
		var rec struct {
			Reason   string `json:"reason"`
			Attempts int    `json:"attempts"`
		}
		if err := json.Unmarshal([]byte(raw), &rec); err != nil {
			t.Fatalf("parked record %s: %v", raw, err)
		}
		if rec.Attempts != maxAttempts || rec.Reason == "" {
			t.Fatalf("parked record %s: want %d attempts and a reason", raw, maxAttempts)
		}
		return nil
	}))
	waitUntil(t, time.Duration(60+n/5)*time.Second, "the other files complete", superviseWhile(s.docsDone(others, func(d protocol.Document) error {
		if len(d.Failures) > 0 {
			return fmt.Errorf("failures %s", d.Failures)
		}
		return nil
	})))
	var reason string
	waitUntil(t, 30*time.Second, "the poison file's document records the failure", superviseWhile(s.docsDone([]string{poison}, func(d protocol.Document) error {
		var f map[string]struct {
			Reason   string `json:"reason"`
			Attempts int    `json:"attempts"`
		}
		if err := json.Unmarshal(d.Failures, &f); err != nil {
			return fmt.Errorf("failures %s: %v", d.Failures, err)
		}
		if e := f[mod]; e.Attempts != maxAttempts || e.Reason == "" {
			return fmt.Errorf("failures %s: want %s with %d attempts and a reason", d.Failures, mod, maxAttempts)
		}
		reason = f[mod].Reason
		return nil
	})))
	waitUntil(t, 30*time.Second, "usb ready despite the poison file", superviseWhile(s.markerIs("usb", "ready")))
	elapsed := time.Since(started)

	// Exactly MAX_ATTEMPTS runs of the poison file, each one a crash; no other file crashed it.
	log, err := os.ReadFile(filepath.Join(s.Meta, "by-id", poison, mod, "log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if runs := strings.Count(string(log), "run started"); runs != maxAttempts {
		t.Errorf("the poison file ran %d times, want MAX_ATTEMPTS = %d:\n%s", runs, maxAttempts, log)
	}
	supervise()
	if crashes != maxAttempts || strings.Count(w.Log(), `"crashing"`) != maxAttempts {
		t.Errorf("crash-module crashed %d times (%d crashing lines), want %d", crashes, strings.Count(w.Log(), `"crashing"`), maxAttempts)
	}
	for _, r := range s.records().runs() {
		if strings.Contains(r.Path, "poison") {
			t.Errorf("a run of the poison file returned: %+v", r)
		}
	}
	t.Logf("Q1: %d files, poison parked after %d attempts (%q), %d others complete, usb ready, in %v",
		n, maxAttempts, reason, len(others), elapsed.Round(time.Millisecond))
}
