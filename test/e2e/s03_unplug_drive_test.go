package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Scenario 3, remove a drive mid-run: none of its remaining jobs starts while it is absent
// (regular files go on meanwhile), its documents stay searchable offline, its marker stays
// pending and unchanged; when it returns its remaining jobs run, once each, and the marker
// flips to ready.
//
// The module is stopped (it finishes its current job) while the drive is pulled out and the
// daemon notices, so that every later run is one the daemon dispatched knowing the drive was
// gone.
func TestS03UnpluggedDrivePausesAndResumes(t *testing.T) {
	t.Parallel()
	const mod = "timeout-module"
	s := newStack(t, []module{{Name: mod, UID: "t1"}}, withDaemonEnv("DISPATCH_WINDOW", "2"))
	var driveIDs, regular []string
	for i := range 8 {
		driveIDs = append(driveIDs, s.write(fmt.Sprintf("archive/usb/f%d.txt", i), fmt.Sprintf("drive file %d", i)))
	}
	for i := range 4 {
		regular = append(regular, s.write(fmt.Sprintf("reg%d.txt", i), fmt.Sprintf("regular file %d", i)))
	}
	s.Daemon.Start()
	worker := s.startModule("slow", bin.timeout, mod, "SLEEP", "0.1")
	waitUntil(t, 30*time.Second, "two drive runs", func() error {
		if n := len(s.records().runs().onDrive()); n < 2 {
			return fmt.Errorf("%d drive runs", n)
		}
		return nil
	})
	worker.Stop()
	ranBefore := s.records().runs().onDrive().countBy(byPath)
	if len(ranBefore) >= len(driveIDs) {
		t.Fatalf("the whole drive ran before the unplug: nothing left to pause")
	}
	if state, _ := s.marker("usb"); state != "pending" {
		t.Fatalf("usb marker %q with jobs left, want pending", state)
	}
	stampBefore := s.markerStamp("usb")

	s.unplug("usb")
	waitUntil(t, 30*time.Second, "the daemon to notice the drive left", func() error {
		if !strings.Contains(s.Daemon.Log(), `"drive":"usb","present":false`) {
			return fmt.Errorf("no presence change logged")
		}
		q, err := s.queuedIDs(mod)
		if err != nil {
			return err
		}
		for _, id := range driveIDs {
			if key, ok := q[id]; ok {
				return fmt.Errorf("drive job %s still in %s", id, key)
			}
		}
		return nil
	})
	restarted := time.Now()
	worker.Start()
	waitUntil(t, 30*time.Second, "the regular files processed while the drive is away", s.docsDone(regular, nil))

	if late := s.records().runs().onDrive().startedAfter(restarted); len(late) > 0 {
		t.Fatalf("drive jobs started while the drive was absent:%v", late)
	}
	q, err := s.queuedIDs(mod)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range driveIDs {
		if key, ok := q[id]; ok {
			t.Fatalf("drive job %s queued in %s while the drive is absent", id, key)
		}
	}
	if got := s.markerStamp("usb"); got != stampBefore {
		t.Fatalf("usb marker changed while absent: %s, was %s", got, stampBefore)
	}
	waitUntil(t, 30*time.Second, "the drive's documents offline in the index", func() error {
		offline, err := s.searchCLI(`has_archive_paths = true AND offline = true`, "")
		if err != nil || len(offline) != len(driveIDs) {
			return fmt.Errorf("offline drive documents in the index: %d (%v), want %d", len(offline), err, len(driveIDs))
		}
		return nil
	})

	s.replug("usb")
	waitUntil(t, 60*time.Second, "the drive's remaining jobs after it returned", s.docsDone(driveIDs, nil))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))
	runs := s.records().runs()
	if got := runs.onDrive().countBy(byPath); len(got) != len(driveIDs) {
		t.Fatalf("drive files run: %v, want all %d", got, len(driveIDs))
	}
	for path, n := range runs.countBy(byPath) {
		if n != 1 {
			t.Fatalf("%s ran %d times, want once:%v", path, n, runs)
		}
	}
	waitUntil(t, 30*time.Second, "the drive's documents online again", func() error {
		online, err := s.searchCLI(`has_archive_paths = true AND offline = false`, "")
		if err != nil || len(online) != len(driveIDs) {
			return fmt.Errorf("%d online drive documents (%v)", len(online), err)
		}
		return nil
	})
}
