package app

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

func TestAddCreatesDocumentLinkAndIndexEntry(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("docs/hello.txt", "hello world\n")
	mt := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	e.setMtime("docs/hello.txt", mt)
	st := e.sync()
	if st.Added != 1 || st.Hashed != 1 || st.NewDocs != 1 {
		t.Fatalf("stats: %+v", st)
	}
	d := e.doc(id)
	wantMtime := 1714979289.1234
	want := protocol.Document{ID: id, Type: "text/plain", Size: 12, Paths: protocol.Paths{{Path: "docs/hello.txt", Mtime: wantMtime}},
		PathsList: []string{"docs/hello.txt"}, Copies: 1, Mtime: wantMtime, Version: protocol.CurrentVersion}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("document:\n got %+v\nwant %+v", d, want)
	}
	if got := e.link("docs/hello.txt"); got != id {
		t.Fatalf("by-path link -> %q, want %s", got, id)
	}
	if !e.indexed(id) {
		t.Fatal("document not in the index")
	}
	if got := e.search("hello", ""); !reflect.DeepEqual(got, []string{id}) {
		t.Fatalf("word search: %v", got)
	}
}

func TestUnchangedResyncReadsNothing(t *testing.T) {
	e := newTestEnv(t)
	for i := 0; i < 20; i++ {
		e.write(filepath.Join("d", string(rune('a'+i))+".txt"), strings.Repeat("x", i+1))
	}
	e.sync()
	before, _ := os.ReadFile(filepath.Join(e.meta, "by-id", idOf("x"), "document.json"))
	st := e.sync()
	if st.Hashed != 0 || st.Unchanged != 20 || st.Added+st.Modified+st.Deleted != 0 {
		t.Fatalf("unchanged re-sync: %+v", st)
	}
	n, _, _ := e.app.Catalog.OutboxLen(e.ctx)
	if n != 0 {
		t.Fatalf("outbox has %d keys after an unchanged sync", n)
	}
	after, _ := os.ReadFile(filepath.Join(e.meta, "by-id", idOf("x"), "document.json"))
	if string(before) != string(after) {
		t.Fatal("document.json rewritten")
	}
	// A restart with nothing changed reads nothing either.
	e.open()
	if st := e.sync(); st.Hashed != 0 {
		t.Fatalf("after restart: hashed %d", st.Hashed)
	}
}

func TestTouchedFileKeepsIDAndUpdatesMtime(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("a.txt", "same")
	e.setMtime("a.txt", time.Unix(1700000000, 0))
	e.sync()
	e.setMtime("a.txt", time.Unix(1700000100, 500000000))
	st := e.sync()
	if st.Hashed != 1 || st.NewDocs != 0 {
		t.Fatalf("stats: %+v", st)
	}
	if d := e.doc(id); d.Mtime != 1700000100.5 || d.Paths[0].Mtime != 1700000100.5 {
		t.Fatalf("mtime not updated: %+v", d)
	}
}

func TestModifyMakesNewIDAndKeepsOldMetadata(t *testing.T) {
	e := newTestEnv(t)
	old := e.write("a.txt", "version one")
	e.sync()
	if err := os.WriteFile(filepath.Join(e.meta, "by-id", old, "note.txt"), []byte("module output"), 0o644); err != nil {
		t.Fatal(err)
	}
	nu := e.write("a.txt", "version two!")
	st := e.sync()
	if st.Modified != 1 || st.RetiredDocs != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if e.link("a.txt") != nu {
		t.Fatal("link not re-pointed")
	}
	if !e.hasDir(old) {
		t.Fatal("old by-id directory removed; it must stay")
	}
	if e.indexed(old) || !e.indexed(nu) {
		t.Fatalf("index: old %v new %v", e.indexed(old), e.indexed(nu))
	}
	// The old content coming back revives the old document and its metadata.
	e.write("a.txt", "version one")
	e.sync()
	if !e.indexed(old) || e.indexed(nu) || e.hasDir(nu) == false {
		t.Fatalf("revert: old indexed %v, new indexed %v", e.indexed(old), e.indexed(nu))
	}
	if _, err := os.Stat(filepath.Join(e.meta, "by-id", old, "note.txt")); err != nil {
		t.Fatal("module output of the old document lost")
	}
}

func TestModifyKeepsOldIDWhileAnotherCopyRemains(t *testing.T) {
	e := newTestEnv(t)
	old := e.write("a.txt", "shared")
	e.write("b.txt", "shared")
	e.sync()
	nu := e.write("a.txt", "changed")
	e.sync()
	d := e.doc(old)
	if d.Copies != 1 || d.PathsList[0] != "b.txt" || !e.indexed(old) || !e.indexed(nu) {
		t.Fatalf("old doc: %+v", d)
	}
}

func TestDuplicatesShareOneDocument(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("x/one.bin", "dup")
	e.write("y/two.bin", "dup")
	e.write("z/three.bin", "dup")
	e.sync()
	d := e.doc(id)
	if d.Copies != 3 || !reflect.DeepEqual(d.PathsList, []string{"x/one.bin", "y/two.bin", "z/three.bin"}) {
		t.Fatalf("duplicate doc: %+v", d)
	}
	for _, p := range d.PathsList {
		if e.link(p) != id {
			t.Fatalf("link %s", p)
		}
	}
	// Delete one copy.
	e.remove("y") // the directory goes too: an emptied directory would be held
	st := e.sync()
	if st.Deleted != 1 || st.MissingDocs != 0 {
		t.Fatalf("stats: %+v", st)
	}
	if d := e.doc(id); d.Copies != 2 || len(d.Paths) != 2 {
		t.Fatalf("after deleting one copy: %+v", d)
	}
	if _, err := os.Lstat(filepath.Join(e.meta, "by-path", "y")); !os.IsNotExist(err) {
		t.Fatal("empty by-path parent not pruned")
	}
	// Delete the last copies: the document goes missing (out of the index, directory kept).
	e.write("other.txt", "keeps the root from looking unmounted")
	e.remove("x")
	e.remove("z")
	st = e.sync()
	if st.MissingDocs != 1 || !e.hasDir(id) || e.indexed(id) {
		t.Fatalf("after deleting the last copy: %+v dir %v indexed %v", st, e.hasDir(id), e.indexed(id))
	}
}

func TestSymlinks(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("real/target.txt", "target bytes")
	if err := os.Symlink("real/target.txt", e.abs("link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", e.abs("linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere.txt", e.abs("broken.txt")); err != nil {
		t.Fatal(err)
	}
	st := e.sync()
	d := e.doc(id)
	if !reflect.DeepEqual(d.PathsList, []string{"link.txt", "real/target.txt"}) {
		t.Fatalf("paths: %v (symlinked dir must not be followed)", d.PathsList)
	}
	if st.Errors != 1 {
		t.Fatalf("broken symlink: errors %d, want 1", st.Errors)
	}
}

func TestMarkersAndMetadataDirAreNeverIndexed(t *testing.T) {
	e := newTestEnv(t)
	e.vars["METADATA_DIRECTORY"] = e.abs("meta")
	e.meta = e.abs("meta")
	e.write("Foo-status-ready", "x")
	e.write("sub/Bar-status-pending", "x")
	e.write("archive/Baz-status-ready", "x")
	id := e.write("real.txt", "real")
	e.sync()
	e.sync() // the metadata written by the first sync must not be picked up by the second
	ids := e.search("", "")
	if !reflect.DeepEqual(ids, []string{id}) {
		t.Fatalf("indexed: %v", ids)
	}
	if got := e.search("", `paths_list = "Foo-status-ready"`); len(got) != 0 {
		t.Fatalf("marker indexed: %v", got)
	}
}

func TestFileVanishingOrUnreadableDoesNotStopSync(t *testing.T) {
	e := newTestEnv(t)
	e.write("ok.txt", "fine")
	// A FIFO cannot be hashed without blocking; the walk must only take regular files.
	if err := syscallMkfifo(e.abs("fifo")); err != nil {
		t.Fatal(err)
	}
	st := e.sync()
	if st.Added != 1 {
		t.Fatalf("stats: %+v", st)
	}
}

func TestDirtyAllDocsRebuildsDeletedMetadata(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("a.txt", "a")
	e.sync()
	// Someone deletes the metadata directory: re-dirtying everything rebuilds it.
	os.RemoveAll(filepath.Join(e.meta, "by-id"))
	os.RemoveAll(filepath.Join(e.meta, "by-path"))
	e.open()
	if err := e.app.Catalog.DirtyAllDocs(e.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.Outbox.Drain(e.ctx); err != nil {
		t.Fatal(err)
	}
	if e.doc(id).ID != id {
		t.Fatal("not rebuilt")
	}
}

// The sync meets the catalog's rows in path order: names that sort around a directory's
// ("a-b" and "a.b" before "a/", "a0" after) keep their rows, and only the removed paths go
// (each directory keeps a file: an emptied one would be held, not removed).
func TestResyncFindsRemovalsAmongInterleavedNames(t *testing.T) {
	e := newTestEnv(t)
	names := []string{"a-b", "a.b", "a/b", "a/c/d", "a/c/e", "a0", "b\xff", "z/y/w", "z/y/x"}
	for i, n := range names {
		e.write(n, strings.Repeat("n", i+1))
	}
	if st := e.sync(); st.Added != len(names) {
		t.Fatalf("first sync: %+v", st)
	}
	e.remove("a.b")
	e.remove("a/c/d")
	e.remove("z/y/x")
	st := e.sync()
	if st.Deleted != 3 || st.Unchanged != len(names)-3 || st.Hashed != 0 {
		t.Fatalf("re-sync: %+v, want 3 deleted, %d unchanged, nothing hashed", st, len(names)-3)
	}
	for _, n := range []string{"a-b", "a/b", "a/c/e", "a0", "b\xff", "z/y/w"} {
		if e.link(n) == "" {
			t.Errorf("by-path/%q lost", n)
		}
	}
	for _, n := range []string{"a.b", "a/c/d", "z/y/x"} {
		if _, err := os.Lstat(filepath.Join(e.meta, "by-path", filepath.FromSlash(n))); err == nil {
			t.Errorf("by-path/%q kept after its file was removed", n)
		}
	}
}
