package e2e

import (
	"fmt"
	"testing"
	"time"
)

// Scenario 2, plug in an archive drive: a drive mounted while regular files are being processed
// has its jobs run before every regular job not yet started, including regular jobs already
// waiting in the module's queue; its marker becomes ready.
//
// The module is stopped (SIGTERM: it finishes its current job) while the drive is plugged in
// and the daemon reacts, so "not yet started" is exact: every regular job without a recorded
// run by then. Otherwise a job being checked at the instant of the preemption would make the
// assertion racy.
func TestS02PluggedDriveJumpsTheQueue(t *testing.T) {
	t.Parallel()
	const mod = "timeout-module"
	s := newStack(t, []module{{Name: mod, UID: "t1"}})
	var regular []string
	for i := range 12 {
		regular = append(regular, s.write(fmt.Sprintf("r%02d.txt", i), fmt.Sprintf("regular file %d", i)))
	}
	s.Daemon.Start()
	worker := s.startModule("slow", bin.timeout, mod, "SLEEP", "0.1")
	waitUntil(t, 30*time.Second, "two regular runs", func() error {
		if n := len(s.records().runs()); n < 2 {
			return fmt.Errorf("%d runs", n)
		}
		return nil
	})
	worker.Stop()
	startedBeforePlug := s.records().runs().countBy(byPath)
	waiting, err := s.queuedIDs(mod)
	if err != nil {
		t.Fatal(err)
	}
	if len(waiting) == 0 {
		t.Fatal("no regular job waiting in the queue before the plug: nothing to jump")
	}

	drive := s.plug("usb", map[string]string{"p1.jpg": "photo one", "p2.jpg": "photo two", "p3.jpg": "photo three"})
	waitUntil(t, 30*time.Second, "the drive's jobs queued ahead", func() error {
		q, err := s.queuedIDs(mod)
		if err != nil {
			return err
		}
		for path, id := range drive {
			if _, ok := q[id]; !ok {
				return fmt.Errorf("%s not queued (queue %v)", path, q)
			}
		}
		return nil
	})
	if state, _ := s.marker("usb"); state != "pending" {
		t.Fatalf("usb marker %q while its jobs wait, want pending", state)
	}
	worker.Start()

	var all []string
	all = append(all, regular...)
	for _, id := range drive {
		all = append(all, id)
	}
	waitUntil(t, 60*time.Second, "every file through the chain", s.docsDone(all, nil))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))

	runs := s.records().runs()
	if got := runs.countBy(byPath); len(got) != len(all) || len(runs) != len(all) {
		t.Fatalf("runs per file %v, want one run for each of %d files", got, len(all))
	}
	notStarted := runs.regular().where(func(r record) bool { return startedBeforePlug[r.Path] == 0 })
	if want := len(regular) - len(startedBeforePlug); len(notStarted) != want || want < len(waiting) {
		t.Fatalf("%d regular runs after the plug, want %d (with the %d that were waiting in the queue)", len(notStarted), want, len(waiting))
	}
	// notStarted includes the regular jobs that were already waiting in the queue.
	assertAllBefore(t, "the plugged drive's jobs before every regular job not yet started", runs.onDrive(), notStarted)
}
