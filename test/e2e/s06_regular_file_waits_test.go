package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// Scenario 6, non-archive files unaffected: a regular file added while a drive is being
// processed is known to the daemon at once but waits until every tier-A job has finished,
// then is processed normally; the drive's marker goes pending → ready.
func TestS06RegularFileAddedMidArchiveWaitsForTierA(t *testing.T) {
	t.Parallel()
	const mod = "timeout-module"
	s := newStack(t, []module{{Name: mod, UID: "t1"}}, withDaemonEnv("DISPATCH_WINDOW", "2"))
	var driveIDs []string
	for i := range 12 {
		driveIDs = append(driveIDs, s.write(fmt.Sprintf("archive/usb/f%02d.txt", i), fmt.Sprintf("drive file %d", i)))
	}
	early := s.write("zz-before.txt", "a regular file there from the start")
	s.Daemon.Start()
	waitUntil(t, 30*time.Second, "usb pending", s.markerIs("usb", "pending"))
	s.startModule("slow", bin.timeout, mod, "SLEEP", "0.25")
	waitUntil(t, 30*time.Second, "the first drive run", func() error {
		if len(s.records().runs()) == 0 {
			return fmt.Errorf("no run yet")
		}
		return nil
	})

	// Sorts before "archive/": only its tier can keep it waiting.
	added := s.write("aaa-added.txt", "a regular file added mid-archive")
	var known time.Time
	waitUntil(t, 30*time.Second, "the added file's document", func() error {
		if _, err := os.Stat(s.Meta + "/by-id/" + added + "/document.json"); err != nil {
			return err
		}
		known = time.Now()
		return nil
	})
	waitUntil(t, 60*time.Second, "every file through the chain", s.docsDone(append([]string{added, early}, driveIDs...), nil))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))

	runs := s.records().runs()
	if lastDrive := runs.onDrive()[len(runs.onDrive())-1]; !lastDrive.StartTime().After(known) {
		t.Fatalf("the drive finished (%v) before the added file was known at %s: nothing was left to wait for",
			lastDrive, known.Format("15:04:05.000"))
	}
	assertAllBefore(t, "tier A before the regular files, the added one included", runs.onDrive(), runs.regular())
	d, err := s.doc(added)
	if err != nil || d.HasArchivePaths || d.Offline || d.Next != "" {
		t.Fatalf("added document %+v (%v), want a processed regular document", d, err)
	}
	if v, err := s.moduleFile(added, mod, "version.json"); err != nil || string(v) != `{"version": 1}` {
		t.Fatalf("added file's version.json %q (%v)", v, err)
	}
}
