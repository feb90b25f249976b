package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// D1 (docs/invariants.md, fault catalogue): the disk under the metadata directory fills up while homeindexd
// rewrites a document. The old document.json stays intact (it still parses and holds the old
// bytes), the failure is logged with the document's id and the cause, the write is retried
// (several attempts while the disk is full), and once space is freed the new document lands
// without any further change to the files; the stores then agree.
//
// The metadata directory is a small tmpfs filled to ENOSPC, where the machine lets the test
// mount one (root with CAP_SYS_ADMIN); otherwise the write error is injected by making the
// metadata directory's temporary-file directory immutable (chattr +i: creating a file there
// fails with EPERM, even for root). The test logs which path ran; one of them must work.
func TestFaultD1DiskFullWhileWritingADocument(t *testing.T) {
	t.Parallel()
	r := newFaultRun(t, 1, 4, nil)
	id := r.ids[0]
	cause := fillMetadataDisk(t, r.Meta)
	r.Daemon.Start()
	waitUntil(t, 60*time.Second, "the document written", func() error { return r.complete() })
	docPath := filepath.Join(r.Meta, "by-id", id, "document.json")
	old, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}

	fill := cause.fill(t)
	// A second copy of the file: its document gains a path and must be rewritten.
	content, err := os.ReadFile(filepath.Join(r.Files, "d000", "f00000.txt"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(r.Files, "copy.txt"), string(content))
	failure := []string{`"message":"document.json not written; will retry"`, id}
	waitUntil(t, 60*time.Second, "two failed attempts to write the document", func() error {
		if n := logLines(r.Daemon.Log(), failure...); n < 2 {
			return fmt.Errorf("%d failed attempts logged", n)
		}
		return nil
	})
	now, err := os.ReadFile(docPath)
	if err != nil || !bytes.Equal(now, old) {
		t.Fatalf("document.json while the disk is full (%v):\n%s\nwant the old one intact:\n%s", err, now, old)
	}
	if d, err := r.doc(id); err != nil || len(d.PathsList) != 1 {
		t.Fatalf("old document while the disk is full: %v, %v", d.PathsList, err)
	}
	var failLine string
	for _, line := range strings.Split(r.Daemon.Log(), "\n") {
		if strings.Contains(line, failure[0]) && strings.Contains(line, id) {
			failLine = line
			break
		}
	}
	if !strings.Contains(failLine, cause.errText) {
		t.Fatalf("failure logged as %s; want the cause %q named", failLine, cause.errText)
	}
	attempts := logLines(r.Daemon.Log(), failure...)

	fill.undo(t)
	waitUntil(t, 60*time.Second, "the document rewritten once space is back", func() error {
		d, err := r.doc(id)
		if err != nil {
			return err
		}
		if len(d.PathsList) != 2 {
			return fmt.Errorf("paths %v", d.PathsList)
		}
		return r.complete()
	})
	r.assertAgree()
	t.Logf("D1 (%s): old document.json intact while the disk was full, %d failed attempts logged (%s), written once space was back",
		cause.name, attempts, cause.errText)
}

// diskFault is how D1 makes metadata writes fail.
type diskFault struct {
	name    string
	errText string
	fill    func(t *testing.T) diskFill
}

type diskFill struct{ undo func(t *testing.T) }

// fillMetadataDisk mounts a 1 MiB tmpfs on dir when the machine allows it, else prepares the
// chattr +i injection; cleanup unmounts or clears the attribute.
func fillMetadataDisk(t *testing.T, dir string) diskFault {
	t.Helper()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", dir).CombinedOutput()
	if err == nil {
		unmount := func() { _ = exec.Command("umount", "-l", dir).Run() }
		t.Cleanup(unmount)
		return diskFault{name: "tmpfs full", errText: "no space left on device", fill: func(t *testing.T) diskFill {
			t.Helper()
			filler := filepath.Join(dir, "filler")
			fh, err := os.Create(filler)
			if err != nil {
				t.Fatal(err)
			}
			chunk := make([]byte, 16<<10)
			for {
				if _, err := fh.Write(chunk); err != nil {
					if !errors.Is(err, syscall.ENOSPC) {
						t.Fatalf("fill the tmpfs: %v", err)
					}
					break
				}
			}
			fh.Close()
			return diskFill{undo: func(t *testing.T) {
				if err := os.Remove(filler); err != nil {
					t.Fatal(err)
				}
			}}
		}}
	}
	t.Logf("D1: cannot mount a tmpfs (%v: %s); injecting the write error with chattr +i", err, strings.TrimSpace(string(out)))
	return diskFault{name: "chattr +i on the temporary directory", errText: "operation not permitted", fill: func(t *testing.T) diskFill {
		t.Helper()
		tmp := filepath.Join(dir, ".tmp")
		if out, err := exec.Command("chattr", "+i", tmp).CombinedOutput(); err != nil {
			t.Fatalf("D1 cannot fail a write: no tmpfs mount and chattr +i %s: %v: %s", tmp, err, out)
		}
		undo := func() { _ = exec.Command("chattr", "-i", tmp).Run() }
		t.Cleanup(undo)
		return diskFill{undo: func(t *testing.T) {
			if out, err := exec.Command("chattr", "-i", tmp).CombinedOutput(); err != nil {
				t.Fatalf("chattr -i %s: %v: %s", tmp, err, out)
			}
		}}
	}}
}
