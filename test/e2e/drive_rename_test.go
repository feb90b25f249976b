package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// A drive mounted under another name (its directory renamed) is the same drive: its documents
// keep their ids and module output, take the new paths, the new name gets a ready marker and
// the old one loses its marker, and no module runs again (cost follows change).
func TestRenamedDriveRerunsNothing(t *testing.T) {
	t.Parallel()
	s := newStack(t, []module{{Name: "example-module", UID: "e1"}})
	ids := []string{s.write("archive/usb/a.txt", "drive file a"), s.write("archive/usb/sub/b.txt", "drive file b")}
	s.Daemon.Start()
	s.startModule("example", bin.example, "example-module")
	waitUntil(t, 60*time.Second, "the drive processed", s.docsDone(ids, noted))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))
	records := len(s.records())

	s.renameDrive("usb", "usb-2019")
	waitUntil(t, 30*time.Second, "the documents at their new paths", s.docsDone(ids, func(d protocol.Document) error {
		if len(d.PathsList) != 1 || !strings.HasPrefix(d.PathsList[0], "archive/usb-2019/") {
			return fmt.Errorf("paths %v", d.PathsList)
		}
		return noted(d)
	}))
	waitUntil(t, 30*time.Second, "usb-2019 ready", s.markerIs("usb-2019", "ready"))
	waitUntil(t, 30*time.Second, "the old name's marker removed", s.markerIs("usb", ""))
	// Links follow the catalog through the outbox; the marker may be rewritten by the sync first.
	waitUntil(t, 30*time.Second, "the by-path link at the new path", func() error {
		_, err := os.Lstat(filepath.Join(s.Meta, "by-path", "archive", "usb-2019", "sub", "b.txt"))
		return err
	})
	if n := len(s.records()); n != records {
		t.Fatalf("the rename made modules work again: %v", s.records()[records:])
	}
}
