package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
