package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSyncDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := SyncDir(dir); err != nil {
		t.Errorf("SyncDir(%s) = %v, want nil", dir, err)
	}
	if err := SyncDir(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SyncDir(missing) = %v, want fs.ErrNotExist", err)
	}
}

func TestReplaceFile(t *testing.T) {
	t.Parallel()
	dir, tmp := t.TempDir(), t.TempDir()
	dst := filepath.Join(dir, "doc.json")
	for _, content := range []string{"first", "second"} {
		if err := ReplaceFile(tmp, "doc.*", dst, []byte(content), 0o640, true); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(dst)
		if err != nil || string(got) != content {
			t.Fatalf("dst holds %q (%v), want %q", got, err, content)
		}
	}
	if fi, _ := os.Stat(dst); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	// A failed rename (dst is a non-empty directory) leaves no temp file behind.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceFile(tmp, "doc.*", blocked, []byte("x"), 0o644, false); err == nil {
		t.Fatal("rename over a non-empty directory succeeded")
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// A temp name built from a 255-byte name (here not UTF-8, with a newline) must still fit.
func TestReplaceFileLongName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := "caf\xe9\n" + strings.Repeat("\xff", NameMax-5)
	if len(name) != NameMax {
		t.Fatalf("name is %d bytes", len(name))
	}
	for _, pattern := range []string{name + ".*", "." + name + ".*", "*" + name, name} {
		if err := ReplaceFile(dir, pattern, filepath.Join(dir, name), []byte(pattern), 0o644, true); err != nil {
			t.Fatalf("pattern of %d bytes: %v", len(pattern), err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != pattern {
			t.Fatalf("content %q", got)
		}
	}
	if p := TempPattern("x.*"); p != "x.*" {
		t.Errorf("short pattern changed: %q", p)
	}
	if p := TempPattern(name + ".*"); len(p)-1+createTempDigits > NameMax || !strings.HasSuffix(p, "*") {
		t.Errorf("TempPattern = %d bytes %q", len(p), p)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries left, want the file alone", len(entries))
	}
}

func TestCreateFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dst := filepath.Join(dir, "caf\xe9\n.json") // names are bytes
	if err := CreateFile(dst, []byte("first"), 0o640, true); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dst)
	if err != nil || string(got) != "first" {
		t.Fatalf("dst holds %q (%v), want %q", got, err, "first")
	}
	if fi, _ := os.Stat(dst); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	// It never replaces: an existing name is an error and keeps its content.
	if err := CreateFile(dst, []byte("second"), 0o640, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("CreateFile over an existing file = %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(dst); string(got) != "first" {
		t.Errorf("existing file now holds %q", got)
	}
	// The file was unnamed until linked: the directory holds dst and nothing else.
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries, want dst alone: %v", len(entries), entries)
	}
	if err := CreateFile(filepath.Join(dir, "missing", "x"), nil, 0o644, false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CreateFile in a missing directory = %v, want fs.ErrNotExist", err)
	}
}

// procfs has no O_TMPFILE: the error says so, for the caller to write through ReplaceFile.
func TestCreateFileUnsupported(t *testing.T) {
	t.Parallel()
	err := CreateFile("/proc/homeindex-create-test", []byte("x"), 0o644, false)
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("CreateFile in /proc = %v, want errors.ErrUnsupported", err)
	}
}
