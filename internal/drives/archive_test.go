package drives

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPresentMissingArchiveDir(t *testing.T) {
	t.Parallel()
	a := New(filepath.Join(t.TempDir(), "archive"))
	got, err := a.Present()
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("Present: got (%v, %v), want (empty map, nil)", got, err)
	}
	if a.IsPresent("drive1") {
		t.Error("IsPresent(drive1) = true in a missing archive")
	}
}

func TestPresent(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "archive")
	mkdir(t, filepath.Join(dir, "empty"))                         // an empty mount point
	writeFile(t, filepath.Join(dir, "full", "a", "b.txt"), "hi")  // a plugged-in drive
	mkdir(t, filepath.Join(dir, "onlydir", "sub"))                // an empty subdirectory is content
	writeFile(t, filepath.Join(dir, "full-status-ready"), "x")    // marker, not a drive
	writeFile(t, filepath.Join(dir, "notes.txt"), "x")            // file in the archive root
	writeFile(t, filepath.Join(base, "elsewhere", "f.txt"), "hi") // target of a linked drive
	if err := os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "notes.txt"), filepath.Join(dir, "filelink")); err != nil {
		t.Fatal(err)
	}
	a := New(dir)

	got, err := a.Present()
	if err != nil {
		t.Fatalf("Present: %v", err)
	}
	want := map[string]bool{"full": true, "onlydir": true, "linked": true}
	if !maps.Equal(got, want) {
		t.Errorf("Present: got %v, want %v", got, want)
	}
	for name, want := range map[string]bool{
		"full": true, "onlydir": true, "linked": true,
		"empty": false, "missing": false, "notes.txt": false, "filelink": false,
		"": false, ".": false, "..": false, "full/a": false,
	} {
		if got := a.IsPresent(name); got != want {
			t.Errorf("IsPresent(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestDriveOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		archive, rel string
		want         string
		wantOK       bool
	}{
		{"archive", "archive/drive1/x.txt", "drive1", true},
		{"archive", "archive/drive1/a/b/c.txt", "drive1", true},
		{"archive", "archive/drive1-status-ready", "", false},
		{"archive", "archive/drive1", "", false},
		{"archive", "archive", "", false},
		{"archive", "other/x", "", false},
		{"archive", "archive2/drive1/x", "", false},
		{"archive", "archivex/drive1/x", "", false},
		{"archive", "x.txt", "", false},
		{"archive/", "archive/drive1/x.txt", "drive1", true},
		{"media/archive", "media/archive/usb/x", "usb", true},
		{"media/archive", "media/x/usb/x", "", false},
		{"archive2", "archive2/drive1/foo.txt", "drive1", true},
		{"", "drive1/x.txt", "drive1", true},
		{".", "drive1/x.txt", "drive1", true},
		{".", "x.txt", "", false},
		{"../archive", "archive/drive1/x", "", false},
		{"archive", "../archive/drive1/x", "", false},
		{"archive", "/archive/drive1/x", "", false},
		{"archive", "", "", false},
	} {
		got, ok := DriveOf(tc.archive, tc.rel)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("DriveOf(%q, %q) = (%q, %v), want (%q, %v)", tc.archive, tc.rel, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestValidName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"drive1": true, "My Drive": true, ".hidden": true, "a-status-ready": true,
		"": false, ".": false, "..": false, "a/b": false, "/": false, "a\x00": false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}
