package drives

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	t1 = time.Date(2025, 7, 18, 16, 23, 1, 0, time.UTC)
	t2 = time.Date(2025, 7, 19, 1, 2, 3, 0, time.FixedZone("CEST", 2*3600))
)

func newArchive(t *testing.T) Archive {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "archive")
	mkdir(t, dir)
	return New(dir)
}

func readMarker(t *testing.T, a Archive, name string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(a.Dir(), name))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestIsMarker(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"drive1-status-ready":           true,
		"drive1-status-pending":         true,
		"Foo-status-ready":              true,
		"archive/drive1-status-ready":   true,
		"deep/dir/x-status-pending":     true,
		".homeindex-tmp-1-status-ready": true,
		"drive1-status-ready.txt":       false,
		"drive1-status-done":            false,
		"drive1-status-Ready":           false,
		"status-ready":                  false,
		"drive1":                        false,
		"":                              false,
	} {
		if got := IsMarker(name); got != want {
			t.Errorf("IsMarker(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestSetMarkerFlipsAndFormats(t *testing.T) {
	t.Parallel()
	a := newArchive(t)

	if err := a.SetMarker("drive1", Pending, t1); err != nil {
		t.Fatalf("SetMarker pending: %v", err)
	}
	if got, ok := readMarker(t, a, "drive1-status-pending"); !ok || got != "2025-07-18T16:23:01Z" {
		t.Errorf("pending marker: got (%q, %v), want 2025-07-18T16:23:01Z", got, ok)
	}

	// A local time is written as UTC.
	if err := a.SetMarker("drive1", Ready, t2); err != nil {
		t.Fatalf("SetMarker ready: %v", err)
	}
	if got, ok := readMarker(t, a, "drive1-status-ready"); !ok || got != "2025-07-18T23:02:03Z" {
		t.Errorf("ready marker: got (%q, %v), want 2025-07-18T23:02:03Z", got, ok)
	}
	if _, ok := readMarker(t, a, "drive1-status-pending"); ok {
		t.Error("pending marker not removed")
	}
	if got, want := listDir(t, a.Dir()), []string{"drive1-status-ready"}; !slices.Equal(got, want) {
		t.Errorf("archive dir: got %v, want %v (no temp files)", got, want)
	}

	st, content, ok, err := a.Marker("drive1")
	if err != nil || !ok || st != Ready || content != "2025-07-18T23:02:03Z" {
		t.Errorf("Marker: got (%q, %q, %v, %v)", st, content, ok, err)
	}
}

func TestSetMarkerRewritesSameState(t *testing.T) {
	t.Parallel()
	a := newArchive(t)
	writeFile(t, filepath.Join(a.Dir(), "drive1-status-ready"), "2025-01-01T00:00:00Z")
	writeFile(t, filepath.Join(a.Dir(), "drive1-status-pending"), "old") // a crash leftover
	if err := a.SetMarker("drive1", Ready, t1); err != nil {
		t.Fatal(err)
	}
	if got, _ := readMarker(t, a, "drive1-status-ready"); got != "2025-07-18T16:23:01Z" {
		t.Errorf("ready marker: got %q, want 2025-07-18T16:23:01Z", got)
	}
	if _, ok := readMarker(t, a, "drive1-status-pending"); ok {
		t.Error("opposite marker not removed")
	}
}

func TestSetMarkerInvalid(t *testing.T) {
	t.Parallel()
	a := newArchive(t)
	for _, d := range []string{"", ".", "..", "a/b", "../x"} {
		if err := a.SetMarker(d, Ready, t1); !errors.Is(err, ErrInvalidDrive) {
			t.Errorf("SetMarker(%q): got %v, want ErrInvalidDrive", d, err)
		}
		if _, _, _, err := a.Marker(d); !errors.Is(err, ErrInvalidDrive) {
			t.Errorf("Marker(%q): got %v, want ErrInvalidDrive", d, err)
		}
		if err := a.RemoveMarkers(d); !errors.Is(err, ErrInvalidDrive) {
			t.Errorf("RemoveMarkers(%q): got %v, want ErrInvalidDrive", d, err)
		}
	}
	if err := a.SetMarker("drive1", State("done"), t1); err == nil {
		t.Error("SetMarker with an invalid state: got nil error")
	}
	if got := listDir(t, a.Dir()); len(got) != 0 {
		t.Errorf("files written: %v", got)
	}
}

func TestMarkerAndRemoveMarkers(t *testing.T) {
	t.Parallel()
	a := newArchive(t)
	if _, _, ok, err := a.Marker("drive1"); ok || err != nil {
		t.Errorf("Marker with none: got (%v, %v), want (false, nil)", ok, err)
	}

	// Both markers, as a crash between rename and remove leaves them: the newer one wins.
	ready := filepath.Join(a.Dir(), "drive1-status-ready")
	pending := filepath.Join(a.Dir(), "drive1-status-pending")
	writeFile(t, ready, "r")
	writeFile(t, pending, "p")
	if err := os.Chtimes(pending, t1, t1); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(ready, t2, t2); err != nil {
		t.Fatal(err)
	}
	if st, c, ok, err := a.Marker("drive1"); err != nil || !ok || st != Ready || c != "r" {
		t.Errorf("Marker (ready newer): got (%q, %q, %v, %v)", st, c, ok, err)
	}
	if err := os.Chtimes(ready, t1, t1); err != nil {
		t.Fatal(err)
	}
	if st, _, ok, err := a.Marker("drive1"); err != nil || !ok || st != Pending {
		t.Errorf("Marker (tie): got (%q, %v, %v), want pending", st, ok, err)
	}

	if err := a.RemoveMarkers("drive1"); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, a.Dir()); len(got) != 0 {
		t.Errorf("markers left: %v", got)
	}
	if err := a.RemoveMarkers("drive1"); err != nil {
		t.Errorf("RemoveMarkers with none: %v", err)
	}
}

func TestMarkerDrives(t *testing.T) {
	t.Parallel()
	if got, err := New(filepath.Join(t.TempDir(), "missing")).MarkerDrives(); err != nil || len(got) != 0 {
		t.Errorf("missing archive: got (%v, %v)", got, err)
	}
	a := newArchive(t)
	for _, name := range []string{"b-status-ready", "b-status-pending", "a-status-pending",
		"c-status-ready.bak", ".homeindex-tmp-123-status-ready", "-status-ready", "notes.txt"} {
		writeFile(t, filepath.Join(a.Dir(), name), "x")
	}
	mkdir(t, filepath.Join(a.Dir(), "d-status-ready")) // a drive directory, not a marker
	mkdir(t, filepath.Join(a.Dir(), "e"))
	got, err := a.MarkerDrives()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("MarkerDrives: got %v, want %v", got, want)
	}
}

func TestCleanTemp(t *testing.T) {
	t.Parallel()
	a := newArchive(t)
	writeFile(t, filepath.Join(a.Dir(), ".homeindex-tmp-123-status-ready"), "2025")
	writeFile(t, filepath.Join(a.Dir(), "drive1-status-ready"), "keep")
	writeFile(t, filepath.Join(a.Dir(), ".homeindex-tmp-notes"), "keep: not a marker temp")
	if err := a.CleanTemp(); err != nil {
		t.Fatal(err)
	}
	if got, want := listDir(t, a.Dir()), []string{".homeindex-tmp-notes", "drive1-status-ready"}; !slices.Equal(got, want) {
		t.Errorf("after CleanTemp: got %v, want %v", got, want)
	}
	if err := New(filepath.Join(t.TempDir(), "missing")).CleanTemp(); err != nil {
		t.Errorf("missing archive: %v", err)
	}
}

// A marker that cannot be written returns a clear error and leaves the markers as they were.
func TestSetMarkerWriteError(t *testing.T) {
	t.Parallel()
	t.Run("read-only archive dir", func(t *testing.T) {
		t.Parallel()
		a := newArchive(t)
		writeFile(t, filepath.Join(a.Dir(), "drive1-status-pending"), "old")
		if err := os.Chmod(a.Dir(), 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(a.Dir(), 0o755) })
		target := filepath.Join(a.Dir(), "drive1-status-ready")
		wantCause := "permission denied"
		if canWrite(a.Dir()) {
			// Root ignores the mode bits: put a non-empty directory where the marker goes, which
			// rename cannot replace.
			_ = os.Chmod(a.Dir(), 0o755)
			mkdir(t, filepath.Join(target, "x"))
			wantCause = ""
		}
		err := a.SetMarker("drive1", Ready, t1)
		if err == nil {
			t.Fatal("SetMarker: got nil error")
		}
		wantPrefix := "write marker " + target + ": "
		if !strings.HasPrefix(err.Error(), wantPrefix) || !strings.HasSuffix(err.Error(), wantCause) ||
			strings.Contains(err.Error(), tempPrefix) {
			t.Errorf("error: got %q, want %q + cause %q", err, wantPrefix, wantCause)
		}
		t.Logf("error: %v", err)
		if got, ok := readMarker(t, a, "drive1-status-pending"); !ok || got != "old" {
			t.Errorf("pending marker after a failed write: got (%q, %v), want old", got, ok)
		}
		for _, name := range listDir(t, a.Dir()) {
			if strings.HasPrefix(name, tempPrefix) {
				t.Errorf("temp file left: %s", name)
			}
		}
	})
	t.Run("missing archive dir", func(t *testing.T) {
		t.Parallel()
		a := New(filepath.Join(t.TempDir(), "missing"))
		err := a.SetMarker("drive1", Ready, t1)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("got %v, want fs.ErrNotExist", err)
		}
	})
}

// canWrite reports whether a file can be created in dir, which is the case for root whatever
// the mode bits say.
func canWrite(dir string) bool {
	f, err := os.CreateTemp(dir, "probe")
	if err != nil {
		return false
	}
	_ = f.Close()
	_ = os.Remove(f.Name())
	return true
}
