package metadata

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenCreatesLayout(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	for _, dir := range []string{"by-id", "by-path"} {
		fi, err := os.Stat(filepath.Join(s.Root(), dir))
		if err != nil || !fi.IsDir() {
			t.Errorf("%s: got %v, want a directory", dir, err)
		}
	}
	if !filepath.IsAbs(s.Root()) {
		t.Errorf("Root() = %q, want an absolute path", s.Root())
	}
	if _, err := Open(s.Root()); err != nil {
		t.Errorf("reopen: %v", err)
	}
}

func TestWriteDocumentAtomicAndIndented(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	const id = "0123456789abcdef"

	written, err := s.WriteDocument(id, []byte(`{"id":"0123456789abcdef","paths":{"a.txt":1.5},"next":""}`))
	if err != nil || !written {
		t.Fatalf("WriteDocument: got (%v, %v), want (true, nil)", written, err)
	}
	want := "{\n    \"id\": \"0123456789abcdef\",\n    \"paths\": {\n        \"a.txt\": 1.5\n    },\n    \"next\": \"\"\n}\n"
	got, err := s.ReadDocument(id)
	if err != nil {
		t.Fatalf("ReadDocument: %v", err)
	}
	if string(got) != want {
		t.Errorf("document.json:\ngot  %q\nwant %q", got, want)
	}
	if names := tmpEntries(t, s); len(names) != 0 {
		t.Errorf("temp files left: %v", names)
	}
	p := filepath.Join(s.DocumentDir(id), "document.json")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o644 {
		t.Errorf("mode: got %v, want 0644", perm)
	}
	// Only the document is in its directory.
	entries, _ := os.ReadDir(s.DocumentDir(id))
	if len(entries) != 1 {
		t.Errorf("document dir has %d entries, want 1", len(entries))
	}
}

func TestWriteDocumentSkipsIdenticalBytes(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	const id = "abc"
	mustWriteDocument(t, s, id, `{"id":"abc","size":1}`)
	p := filepath.Join(s.DocumentDir(id), "document.json")
	// Backdate the file: a rewrite would set mtime to now.
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(p)

	// Same content, other formatting: the bytes on disk would be identical.
	written, err := s.WriteDocument(id, []byte("{ \"id\": \"abc\",\n \"size\": 1 }"))
	if err != nil || written {
		t.Fatalf("identical write: got (%v, %v), want (false, nil)", written, err)
	}
	after, _ := os.Stat(p)
	if !after.ModTime().Equal(old) || !os.SameFile(before, after) {
		t.Errorf("identical write touched the file: mtime %v, want %v", after.ModTime(), old)
	}

	written, err = s.WriteDocument(id, []byte(`{"id":"abc","size":2}`))
	if err != nil || !written {
		t.Fatalf("changed write: got (%v, %v), want (true, nil)", written, err)
	}
	got, _ := s.ReadDocument(id)
	if !strings.Contains(string(got), `"size": 2`) {
		t.Errorf("document not updated: %s", got)
	}
}

func TestWriteDocumentRejectsBadJSON(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	for _, doc := range []string{``, `{`, `[1]`, `"x"`, `null`, `{"a":1} {"b":2}`} {
		if _, err := s.WriteDocument("abc", []byte(doc)); err == nil {
			t.Errorf("WriteDocument(%q): got nil error", doc)
		}
	}
	if exists(filepath.Join(s.DocumentDir("abc"), "document.json")) {
		t.Error("a document was written")
	}
}

func TestReadDocumentMissing(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	if _, err := s.ReadDocument("nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v, want fs.ErrNotExist", err)
	}
}

func TestRemoveDocument(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	mustWriteDocument(t, s, "abc", `{"id":"abc"}`)
	if err := s.WriteModuleFile("abc", "read", "content.json", []byte(`"hi"`)); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveDocument("abc"); err != nil {
		t.Fatalf("RemoveDocument: %v", err)
	}
	if exists(s.DocumentDir("abc")) {
		t.Error("document directory still exists")
	}
	if err := s.RemoveDocument("abc"); err != nil {
		t.Errorf("RemoveDocument of a missing document: %v", err)
	}
}

func TestModuleFiles(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	dir, err := s.ModuleDir("abc", "text-read_2")
	if err != nil {
		t.Fatalf("ModuleDir: %v", err)
	}
	if want := filepath.Join(s.Root(), "by-id", "abc", "text-read_2"); dir != want {
		t.Errorf("ModuleDir: got %q, want %q", dir, want)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("module dir not created: %v", err)
	}

	if err := s.WriteModuleFile("abc", "read", "content.json", []byte(`["a","b"]`)); err != nil {
		t.Fatalf("WriteModuleFile: %v", err)
	}
	p := filepath.Join(s.DocumentDir("abc"), "read", "content.json")
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteModuleFile("abc", "read", "content.json", []byte(`["a","b"]`)); err != nil {
		t.Fatalf("WriteModuleFile again: %v", err)
	}
	if fi, _ := os.Stat(p); !fi.ModTime().Equal(old) {
		t.Errorf("identical module file rewritten")
	}
	if err := s.WriteModuleFile("abc", "read", "content.json", []byte(`["c"]`)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != `["c"]` {
		t.Errorf("content.json: got %q, want %q", b, `["c"]`)
	}
	if names := tmpEntries(t, s); len(names) != 0 {
		t.Errorf("temp files left: %v", names)
	}
}

func TestCleanTemp(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	// What a crash between CreateTemp and rename leaves behind.
	for _, name := range []string{"document.json.123", "link.0011223344556677"} {
		if err := os.WriteFile(filepath.Join(s.tmpDir(), name), []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../by-id/x", filepath.Join(s.tmpDir(), "link.aa")); err != nil {
		t.Fatal(err)
	}
	if err := s.CleanTemp(); err != nil {
		t.Fatalf("CleanTemp: %v", err)
	}
	if names := tmpEntries(t, s); len(names) != 0 {
		t.Errorf("temp files left: %v", names)
	}
	mustWriteDocument(t, s, "abc", `{"id":"abc"}`)
}

func TestDeferSyncWritesAndFlushes(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.DeferSync()
	if _, err := s.WriteDocument("abc", []byte(`{"id":"abc"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Link("a/b.txt", "abc"); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	b, err := s.ReadDocument("abc")
	if err != nil || !strings.Contains(string(b), `"id": "abc"`) {
		t.Fatalf("%q %v", b, err)
	}
	if id, ok, err := s.LinkTarget("a/b.txt"); err != nil || !ok || id != "abc" {
		t.Fatalf("link %q %v %v", id, ok, err)
	}
}

// A run of new documents (a first sync) creates each directory with mkdir first and each file
// unnamed then linked; a rewrite in between, a symlink in a document's place and a file system
// without O_TMPFILE all keep WriteDocument's rules.
func TestWriteDocumentNewDirectories(t *testing.T) {
	t.Parallel()
	for _, tmpfile := range []bool{true, false} {
		s := openStore(t)
		s.noTmpfile.Store(!tmpfile)
		doc := func(id string, size int) string { return fmt.Sprintf(`{"id":%q,"size":%d}`, id, size) }
		for i := range 5 {
			id := fmt.Sprintf("%016x", i)
			mustWriteDocument(t, s, id, doc(id, i))
			if i > 0 && !s.mkdirFirst.Load() {
				t.Fatalf("tmpfile=%v: after %d new documents ensureDir still looks first", tmpfile, i+1)
			}
		}
		// A rewrite finds its directory there: mkdir fails, the next calls look first.
		const old = "0000000000000001"
		if written, err := s.WriteDocument(old, []byte(doc(old, 100))); err != nil || !written {
			t.Fatalf("tmpfile=%v: rewrite = (%v, %v)", tmpfile, written, err)
		}
		if s.mkdirFirst.Load() {
			t.Errorf("tmpfile=%v: a rewrite left mkdir first", tmpfile)
		}
		if got, _ := s.ReadDocument(old); !strings.Contains(string(got), `"size": 100`) {
			t.Errorf("tmpfile=%v: rewrite not there: %s", tmpfile, got)
		}
		// A symlink where a new document's directory goes is refused with mkdir first too, and
		// nothing is written through it.
		mustWriteDocument(t, s, "00000000000000ff", doc("00000000000000ff", 1))
		outside := t.TempDir()
		const planted = "00000000000000fe"
		if err := os.Symlink(outside, filepath.Join(s.Root(), "by-id", planted)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.WriteDocument(planted, []byte(doc(planted, 1))); err == nil {
			t.Errorf("tmpfile=%v: a document was written through a symlink", tmpfile)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Errorf("tmpfile=%v: written outside the store: %v", tmpfile, entries)
		}
		for i := range 5 {
			id := fmt.Sprintf("%016x", i)
			want := i
			if id == old {
				want = 100
			}
			got, err := s.ReadDocument(id)
			if err != nil || !strings.Contains(string(got), fmt.Sprintf(`"size": %d`, want)) {
				t.Errorf("tmpfile=%v: %s holds %q (%v)", tmpfile, id, got, err)
			}
			if fi, err := os.Stat(filepath.Join(s.DocumentDir(id), "document.json")); err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("tmpfile=%v: %s: %v, mode %v", tmpfile, id, err, fi.Mode())
			}
			if entries, _ := os.ReadDir(s.DocumentDir(id)); len(entries) != 1 {
				t.Errorf("tmpfile=%v: %s has %d entries, want document.json alone", tmpfile, id, len(entries))
			}
		}
		if names := tmpEntries(t, s); len(names) != 0 {
			t.Errorf("tmpfile=%v: temp files left: %v", tmpfile, names)
		}
	}
}

// A document.json already in a directory the caller has just made (another writer's) is
// replaced, not an error.
func TestWriteAtomicNewDirectoryTaken(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	dir := filepath.Join(s.Root(), "by-id", "abc")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, documentName), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if written, err := s.writeAtomicIn(dir, documentName, []byte("new"), true, true); err != nil || !written {
		t.Fatalf("writeAtomicIn = (%v, %v), want (true, nil)", written, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, documentName)); string(got) != "new" {
		t.Errorf("document.json holds %q, want %q", got, "new")
	}
}

// A module hop replaces document.json by exchanging it with a spare file, whose inode is
// written again later: only a plain file of one link is exchanged. A document.json that is a
// symlink or a hard link to a file elsewhere is replaced by a new file, and what it pointed to
// is never written, however many writes follow.
func TestReplaceNeverWritesThroughAPlantedFile(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	outside := t.TempDir()
	target, hard := filepath.Join(outside, "target"), filepath.Join(s.Root(), "hard")
	for _, p := range []string{target, hard} {
		if err := os.WriteFile(p, []byte("not yours"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for id, plant := range map[string]func(dst string) error{
		"symlinked":  func(dst string) error { return os.Symlink(target, dst) },
		"hardlinked": func(dst string) error { return os.Link(hard, dst) },
	} {
		mustWriteDocument(t, s, id, `{"id":"`+id+`"}`)
		dst := filepath.Join(s.DocumentDir(id), "document.json")
		if err := os.Remove(dst); err != nil {
			t.Fatal(err)
		}
		if err := plant(dst); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			mustWriteDocument(t, s, id, fmt.Sprintf(`{"id":"%s","n":%d}`, id, i))
			if fi, err := os.Lstat(dst); err != nil || !fi.Mode().IsRegular() || fi.Sys().(*syscall.Stat_t).Nlink != 1 {
				t.Fatalf("%s: document.json after write %d: %v, %v", id, i, fi, err)
			}
		}
	}
	for _, p := range []string{target, hard} {
		if b, _ := os.ReadFile(p); string(b) != "not yours" {
			t.Errorf("%s now holds %q", p, b)
		}
	}
	if names := tmpEntries(t, s); len(names) != 0 {
		t.Errorf("temp files left: %v", names)
	}
}

// With syncs deferred, only documents take spares: the outbox writes a document again when a
// crash comes before its round's Flush, but nothing writes a module's content.json again, so
// it gets a new file, whose blocks are new, as before. (A spare is linked in the temp
// directory, so a file holding a spare's inode came from there.)
func TestDeferSyncSparesForDocumentsOnly(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	s.DeferSync()
	inode := func(path string) uint64 {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	// fromSpares counts the writes after which path holds an inode that was a spare before.
	fromSpares := func(path string, write func(i int)) int {
		n := 0
		for i := range 4 {
			spares := map[uint64]bool{}
			entries, _ := os.ReadDir(s.tmpDir())
			for _, e := range entries {
				spares[inode(filepath.Join(s.tmpDir(), e.Name()))] = true
			}
			write(i)
			if spares[inode(path)] {
				n++
			}
		}
		return n
	}
	doc := filepath.Join(s.DocumentDir("abc"), "document.json")
	if n := fromSpares(doc, func(i int) { mustWriteDocument(t, s, "abc", fmt.Sprintf(`{"id":"abc","n":%d}`, i)) }); n != 2 {
		t.Errorf("document.json took a spare in %d of 4 writes, want 2 (the first two made the file and the spare)", n)
	}
	content := filepath.Join(s.DocumentDir("abc"), "text", "content.json")
	if n := fromSpares(content, func(i int) {
		if err := s.WriteModuleFile("abc", "text", "content.json", fmt.Appendf(nil, `["%d"]`, i)); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("content.json took a spare in %d of 4 writes, want none", n)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
}
