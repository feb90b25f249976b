package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Scenario 5, status files ignored: files named like drive markers, wherever they are (the
// archive root, a drive, the files root, a subdirectory), are never indexed, never given to a
// module and never get a document or artefacts, while the real files beside them are processed.
func TestS05StatusFilesAreIgnored(t *testing.T) {
	t.Parallel()
	s := newStack(t, []module{{Name: "example-module", UID: "e1"}})
	real := []string{s.write("archive/usb/a.txt", "a real file on a drive"), s.write("b.txt", "a real regular file")}
	markers := map[string]string{ // path → content (each unique, so its would-be id is known)
		"archive/Foo-status-ready":          "marker in the archive root",
		"archive/Bar-status-pending":        "pending marker in the archive root",
		"archive/usb/inner-status-ready":    "marker inside a drive",
		"Foo-status-ready":                  "marker in the files root",
		"docs/old/notes-status-pending":     "marker in a subdirectory",
		"archive/usb/deep/x-status-pending": "marker deep in a drive",
	}
	for rel, content := range markers {
		s.write(rel, content)
	}
	s.Daemon.Start()
	s.startModule("example", bin.example, "example-module")
	waitUntil(t, 60*time.Second, "the real files through the chain", s.docsDone(real, noted))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))
	waitUntil(t, 30*time.Second, "the real files indexed", func() error {
		hits, err := s.searchCLI("", "")
		if err != nil || len(hits) != len(real) {
			return fmt.Errorf("%d documents indexed (%v), want %d", len(hits), err, len(real))
		}
		return nil
	})

	if dirs := s.byIDDirs(); len(dirs) != len(real) {
		t.Fatalf("by-id holds %v, want only the %d real documents", dirs, len(real))
	}
	for rel, content := range markers {
		if _, err := os.Lstat(filepath.Join(s.Meta, "by-path", filepath.FromSlash(rel))); !os.IsNotExist(err) {
			t.Errorf("%s has a by-path link (%v)", rel, err)
		}
		if _, err := os.Stat(filepath.Join(s.Meta, "by-id", docID(content))); !os.IsNotExist(err) {
			t.Errorf("%s has a by-id directory (%v)", rel, err)
		}
		hits, err := s.searchCLI(fmt.Sprintf("paths_list = %q", rel), "")
		if err != nil || len(hits) != 0 {
			t.Errorf("search for %s: %d hits (%v), want none", rel, len(hits), err)
		}
	}
	for _, r := range s.records() {
		if _, isMarker := markers[r.Path]; isMarker {
			t.Errorf("a module was given a status file: %v", r)
		}
	}
}
