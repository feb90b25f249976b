package durable

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// Both ways of naming the unnamed file give the same result: by its descriptor (Linux 6.10 and
// later, or with CAP_DAC_READ_SEARCH) and through /proc/self/fd (every kernel). Not parallel:
// it sets which way CreateFile takes.
func TestCreateFileLinksEitherWay(t *testing.T) {
	defer emptyPathLink.Store(emptyPathLink.Load())
	for _, way := range []struct {
		name  string
		state int32
	}{{"untried", emptyPathUntried}, {"descriptor", emptyPathWorks}, {"proc", emptyPathRefused}} {
		emptyPathLink.Store(way.state)
		dir := t.TempDir()
		dst := filepath.Join(dir, "document.json")
		if err := CreateFile(dst, []byte(way.name), 0o644, false); err != nil {
			t.Fatalf("%s: %v", way.name, err)
		}
		if got, err := os.ReadFile(dst); err != nil || string(got) != way.name {
			t.Errorf("%s: dst holds %q (%v)", way.name, got, err)
		}
		if err := CreateFile(dst, []byte("again"), 0o644, false); !errors.Is(err, fs.ErrExist) {
			t.Errorf("%s: CreateFile over an existing file = %v, want fs.ErrExist", way.name, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("%s: %d entries, want dst alone", way.name, len(entries))
		}
	}
	// On Linux 6.10 and later, or with CAP_DAC_READ_SEARCH (the tests run as root), the
	// descriptor way works, and a first try finds it does.
	emptyPathLink.Store(emptyPathUntried)
	if err := CreateFile(filepath.Join(t.TempDir(), "x"), nil, 0o644, false); err != nil {
		t.Fatal(err)
	}
	if got := emptyPathLink.Load(); got != emptyPathWorks {
		t.Errorf("after a first link the way is %d, want %d (by descriptor)", got, emptyPathWorks)
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

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// sparesFixture makes dir/document.json holding content with perm, and spares in another
// directory, tmp.
func sparesFixture(t *testing.T, content string, perm os.FileMode) (dir, tmp, dst string, s *Spares) {
	t.Helper()
	dir, tmp = t.TempDir(), t.TempDir()
	dst = filepath.Join(dir, "document.json")
	if err := os.WriteFile(dst, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	return dir, tmp, dst, NewSpares(tmp, "spare.*")
}

// Replacing a file again and again moves two inodes back and forth: no inode is made or
// freed after the first replace.
func TestSparesReuseInodes(t *testing.T) {
	t.Parallel()
	_, tmp, dst, s := sparesFixture(t, "0", 0o644)
	inodes := map[uint64]bool{}
	for i := 1; i <= 10; i++ {
		content := strings.Repeat(strconv.Itoa(i), 11-i) // shorter each time: the spare is cut to length
		if err := s.Replace(dst, []byte(content), 0o644, i%2 == 0); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(dst); err != nil || string(got) != content {
			t.Fatalf("replace %d: dst holds %q (%v), want %q", i, got, err, content)
		}
		inodes[inode(t, dst)] = true
	}
	if len(inodes) != 2 {
		t.Errorf("dst had %d inodes over 10 replaces, want 2 (its first and one spare)", len(inodes))
	}
	if left, _ := os.ReadDir(tmp); len(left) != 1 {
		t.Errorf("%d spares kept, want 1: %v", len(left), left)
	}
	if fi, _ := os.Stat(dst); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}

// A reader that opened the file before it was replaced reads the old content whole, however
// many replaces follow: the old inode becomes a spare, but one still open is never written.
func TestSparesSpareReadersFile(t *testing.T) {
	t.Parallel()
	_, _, dst, s := sparesFixture(t, "old content", 0o600)
	reader, err := os.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	for _, content := range []string{"new", "newer", "newest"} {
		if err := s.Replace(dst, []byte(content), 0o644, false); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(dst); string(got) != content {
			t.Fatalf("dst holds %q, want %q", got, content)
		}
	}
	got, err := io.ReadAll(reader)
	if err != nil || string(got) != "old content" {
		t.Errorf("the reader of the old file read %q (%v), want %q", got, err, "old content")
	}
	// The spare that came from the old file (mode 0600) was set back to 0644 if reused.
	if fi, _ := os.Stat(dst); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}

// A spare that is not a plain file of ours (here, linked from elsewhere meanwhile) is let go,
// never written; a dst removed meanwhile is written all the same.
func TestSparesLetGoOfLinkedSpares(t *testing.T) {
	t.Parallel()
	dir, tmp, dst, s := sparesFixture(t, "a", 0o644)
	if err := s.Replace(dst, []byte("b"), 0o644, false); err != nil {
		t.Fatal(err)
	}
	spares, _ := os.ReadDir(tmp)
	if len(spares) != 1 {
		t.Fatalf("%d spares, want 1", len(spares))
	}
	other := filepath.Join(dir, "elsewhere")
	if err := os.Link(filepath.Join(tmp, spares[0].Name()), other); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dst); err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(dst, []byte("c"), 0o644, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dst); string(got) != "c" {
		t.Errorf("dst holds %q, want %q", got, "c")
	}
	if got, _ := os.ReadFile(other); string(got) != "a" {
		t.Errorf("the file linked to the spare now holds %q, want %q", got, "a")
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("spares left: %v (the linked one let go, the new one renamed into dst)", left)
	}
}

// The probe at the first replace finds what the test's file system offers (exchange and
// leases, on ext4 and tmpfs) and leaves nothing behind.
func TestSparesProbeLeavesSparesOn(t *testing.T) {
	t.Parallel()
	_, tmp, dst, s := sparesFixture(t, "a", 0o644)
	s.probed.Do(s.probe)
	if s.off.Load() {
		t.Fatalf("spares off after the probe of %s", tmp)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the probe left %v", left)
	}
	if err := s.Replace(dst, []byte("b"), 0o644, false); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 1 {
		t.Errorf("%d spares after one replace, want 1", len(left))
	}
}
