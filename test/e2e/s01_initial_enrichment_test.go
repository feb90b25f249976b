package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// Scenario 1, initial enrichment: start the stack → mounted archive drives are processed first,
// their markers flip pending → ready, and every file is searchable with the module's output.
func TestS01InitialEnrichment(t *testing.T) {
	t.Parallel()
	s := newStack(t, []module{{Name: "example-module", UID: "e1"}}, withDaemonEnv("DISPATCH_WINDOW", "2"))
	// Regular files named to sort before "archive/": lexical order alone would run them first.
	ids := []string{
		s.write("aaa-first.txt", "regular one"),
		s.write("docs/b.txt", "regular two"),
		s.write("zzz.txt", "regular three"),
		s.write("archive/usb1/a.txt", "drive one a"),
		s.write("archive/usb1/photos/b.txt", "drive one b"),
		s.write("archive/usb1/c.txt", "drive one c"),
		s.write("archive/usb2/x.txt", "drive two x"),
	}
	s.Daemon.Start()
	// The start-up sync finds both drives with modules due: pending, never ready yet.
	for _, d := range []string{"usb1", "usb2"} {
		waitUntil(t, 30*time.Second, d+" pending before any module ran", s.markerIs(d, "pending"))
	}
	s.startModule("example", bin.example, "example-module")

	waitUntil(t, 60*time.Second, "every file through the chain", s.docsDone(ids, noted))
	for _, d := range []string{"usb1", "usb2"} {
		waitUntil(t, 30*time.Second, d+" ready", s.markerIs(d, "ready"))
	}

	runs := s.records().runs()
	if got := runs.countBy(byPath); len(got) != len(ids) || len(runs) != len(ids) {
		t.Fatalf("runs per file %v (%d runs), want one run for each of %d files", got, len(runs), len(ids))
	}
	assertAllBefore(t, "tier A (mounted drives) before tier B", runs.onDrive(), runs.regular())

	// Every file is searchable, with the module's output and its place in the chain.
	waitUntil(t, 30*time.Second, "every file searchable with the module's output", func() error {
		hits, err := s.searchCLI(`next IS EMPTY`, "")
		if err != nil {
			return err
		}
		found := map[string]protocol.Document{}
		for _, h := range hits {
			found[h.ID] = h
		}
		for _, id := range ids {
			h, ok := found[id]
			if !ok {
				return fmt.Errorf("document %s not in the index (%d hits)", id, len(hits))
			}
			if err := noted(h); err != nil {
				return fmt.Errorf("indexed document %s: %w", id, err)
			}
		}
		if len(hits) != len(ids) {
			return fmt.Errorf("%d documents indexed, want %d", len(hits), len(ids))
		}
		return nil
	})
	drive, err := s.searchCLI(`has_archive_paths = true AND offline = false`, "")
	if err != nil || len(drive) != 4 {
		t.Fatalf("drive documents online in the index: %d (%v), want 4", len(drive), err)
	}
}
