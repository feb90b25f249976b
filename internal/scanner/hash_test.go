package scanner

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cespare/xxhash/v2"
)

func TestHashFileKnownVectors(t *testing.T) {
	// Pinned literals, checked against the reference xxhsum -H1 and xxhash's spec vectors.
	tests := []struct{ content, want string }{
		{"", "ef46db3751d8e999"},
		{"a", "d24ec4f1a98c6e5b"},
		{"abc", "44bc2cf5ad770999"},
		{"hi", "ea8842e9ea2638fa"},
		{"hello world\n", "5215e13b207d6d8c"},
		{"\x00\x00\x00\x00\x00\x00\x00\x00", "34c96acdcadb1bbb"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		p := filepath.Join(dir, string(rune('a'+i)))
		if err := os.WriteFile(p, []byte(tt.content), 0o644); err != nil {
			t.Fatal(err)
		}
		id, st, err := HashFile(p)
		if err != nil {
			t.Fatalf("HashFile(%q): %v", tt.content, err)
		}
		if id != tt.want {
			t.Errorf("HashFile(%q) = %s, want %s", tt.content, id, tt.want)
		}
		if st.Size != int64(len(tt.content)) {
			t.Errorf("HashFile(%q) size = %d, want %d", tt.content, st.Size, len(tt.content))
		}
	}
}

func TestHashFileLargeStreamed(t *testing.T) {
	// Not a multiple of the read buffer, so the last read is partial.
	data := make([]byte, 20<<20+12345)
	rng := rand.NewChaCha8([32]byte{1})
	_, _ = rng.Read(data)
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	id, _, err := HashFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := formatID(xxhash.Sum64(data)); id != want {
		t.Errorf("HashFile = %s, want %s (xxhash of the bytes)", id, want)
	}
}

func TestHashFileStatMatchesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("content"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, st, err := HashFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := osStat(t, p, os.Stat); st != want {
		t.Errorf("stat = %+v, want %+v", st, want)
	}
}

func TestHashFileSymlinkHashesTarget(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	symlink(t, "target", link)

	id, st, err := HashFile(link)
	if err != nil {
		t.Fatal(err)
	}
	if id != "44bc2cf5ad770999" {
		t.Errorf("id = %s, want the target's 44bc2cf5ad770999", id)
	}
	if want := osStat(t, target, os.Stat); st != want {
		t.Errorf("stat = %+v, want the target's %+v", st, want)
	}
}

func TestHashFileErrors(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken")
	symlink(t, "nowhere", broken)

	tests := []struct {
		name, path string
		want       error
	}{
		{"missing", filepath.Join(dir, "missing"), fs.ErrNotExist},
		{"broken symlink", broken, fs.ErrNotExist},
		{"directory", dir, ErrNotRegular},
		// Must fail at once, not block waiting for a writer.
		{"fifo", fifo, ErrNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, _, err := HashFile(tt.path)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if id != "" {
				t.Errorf("id = %q on error", id)
			}
		})
	}
}

func TestHashFileReadsOtherThanStatSizeIsChanged(t *testing.T) {
	// A procfs file is a regular file whose stat size (0) never matches what a read returns:
	// the same check that catches a file growing or shrinking while hashed.
	_, _, err := HashFile("/proc/self/status")
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("err = %v, want ErrChanged", err)
	}
}

func TestHashFileCanceled(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, _, err := hashFileHead(ctx, p, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// osStat is the reference FileStat, from the os package.
func osStat(t testing.TB, path string, stat func(string) (os.FileInfo, error)) FileStat {
	t.Helper()
	fi, err := stat(path)
	if err != nil {
		t.Fatal(err)
	}
	sys := fi.Sys().(*syscall.Stat_t)
	return FileStat{Dev: uint64(sys.Dev), Ino: sys.Ino, Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()}
}
