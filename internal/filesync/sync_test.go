package filesync_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/filesync"
	"github.com/homeindex/homeindex/protocol"
)

// A new file becomes a document with its type, size, path and truncated mtime, `next` set to
// the first module, and its doc: and path: keys go to the outbox.
func TestNewFileBecomesDocument(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *filesync.Config) { c.FirstModule = func() string { return "m1" } })
	id := b.write("docs/hello.txt", "hello world\n")
	b.setMtime("docs/hello.txt", time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC))
	st := b.sync()
	if st.Walked != 1 || st.Added != 1 || st.Hashed != 1 || st.HashedBytes != 12 || st.NewDocs != 1 || st.Errors != 0 {
		t.Fatalf("stats: %+v", st)
	}
	got := b.live(id)
	const mtime = 1714979289.1234
	want := protocol.Document{ID: id, Type: "text/plain", Size: 12, Paths: protocol.Paths{{Path: "docs/hello.txt", Mtime: mtime}},
		PathsList: []string{"docs/hello.txt"}, Copies: 1, Mtime: mtime, Next: "m1", Version: protocol.CurrentVersion}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("document:\n got %+v\nwant %+v", got, want)
	}
	if keys := b.takeOutbox(); !slices.Equal(keys, []string{catalog.DocKey(id), catalog.PathKey("docs/hello.txt")}) {
		t.Fatalf("outbox keys %v", keys)
	}
	if p := b.s.Progress(); p.Running {
		t.Fatalf("progress after the sync: %+v", p)
	}
}

// A second sync over an unchanged tree reads no file and dirties nothing; so does the first
// sync of a new Syncer (a restart).
func TestUnchangedResyncReadsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 20 {
		b.write(filepath.Join("d", string(rune('a'+i))+".txt"), strings.Repeat("x", i+1))
	}
	b.sync()
	b.takeOutbox()
	st := b.sync()
	if st.Hashed != 0 || st.Unchanged != 20 || st.Added+st.Modified+st.Deleted != 0 {
		t.Fatalf("unchanged re-sync: %+v", st)
	}
	if keys := b.takeOutbox(); len(keys) != 0 {
		t.Fatalf("an unchanged sync dirtied %v", keys)
	}
	b.open()
	if st := b.sync(); st.Hashed != 0 || st.Unchanged != 20 {
		t.Fatalf("after restart: %+v", st)
	}
	if keys := b.takeOutbox(); len(keys) != 0 {
		t.Fatalf("an unchanged sync after restart dirtied %v", keys)
	}
}

// A touched file (same bytes, new mtime) is read again but keeps its document; only the
// document's mtime changes.
func TestTouchedFileKeepsIDAndUpdatesMtime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.write("a.txt", "same")
	b.setMtime("a.txt", time.Unix(1700000000, 0))
	b.sync()
	b.takeOutbox()
	b.setMtime("a.txt", time.Unix(1700000100, 500000000))
	st := b.sync()
	if st.Hashed != 1 || st.NewDocs != 0 || st.Modified != 0 || st.Added != 0 {
		t.Fatalf("stats: %+v", st)
	}
	if d := b.live(id); d.Mtime != 1700000100.5 || d.Paths[0].Mtime != 1700000100.5 {
		t.Fatalf("mtime not updated: %+v", d)
	}
	if keys := b.takeOutbox(); !slices.Equal(keys, []string{catalog.DocKey(id)}) {
		t.Fatalf("outbox keys %v, want the document only", keys)
	}
}

// A modified file gets a new document; the old one, with no path left, goes missing (kept,
// not deleted). The old content coming back revives the old document as it was.
func TestModifiedFileGetsNewDocumentAndOldOneReturns(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *filesync.Config) { c.FirstModule = func() string { return "m1" } })
	old := b.write("a.txt", "version one")
	b.sync()
	nu := b.write("a.txt", "version two!")
	st := b.sync()
	if st.Modified != 1 || st.RetiredDocs != 1 || st.NewDocs != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if id, ok, _ := b.cat.FileDoc(b.ctx, "a.txt"); !ok || id != nu {
		t.Fatalf("a.txt -> %q, want %s", id, nu)
	}
	if s := b.state(old); s != catalog.DocRetired {
		t.Fatalf("old document state %v, want retired (missing)", s)
	}
	if n, _ := b.cat.CountMissing(b.ctx); n != 1 {
		t.Fatalf("missing %d, want 1", n)
	}
	b.write("a.txt", "version one")
	st = b.sync()
	if st.ReturnedDocs != 1 || st.NewDocs != 0 || st.RetiredDocs != 1 {
		t.Fatalf("revert: %+v", st)
	}
	if b.state(old) != catalog.DocLive || b.state(nu) != catalog.DocRetired {
		t.Fatalf("revert: old %v new %v", b.state(old), b.state(nu))
	}
	if d := b.live(old); d.Next != "m1" {
		t.Fatalf("the returned document lost its chain state: %+v", d)
	}
	// New content of another type: the type recorded is that of the bytes hashed (the
	// hasher names it), not the old document's.
	png := b.write("a.txt", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00")
	b.sync()
	if d := b.live(png); d.Type != "image/png" {
		t.Fatalf("PNG content under a.txt recorded as %q, want image/png", d.Type)
	}
}

// Modifying one of two copies leaves the old document live with the other path.
func TestModifyKeepsOldIDWhileAnotherCopyRemains(t *testing.T) {
	t.Parallel()
	b := setup(t)
	old := b.write("a.txt", "shared")
	b.write("b.txt", "shared")
	b.sync()
	nu := b.write("a.txt", "changed")
	if st := b.sync(); st.RetiredDocs != 0 || st.Modified != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if d := b.live(old); d.Copies != 1 || !slices.Equal(d.PathsList, []string{"b.txt"}) {
		t.Fatalf("old doc: %+v", d)
	}
	b.live(nu)
}

// Identical bytes at several paths are one document; deleting copies removes paths, and the
// last one makes the document missing.
func TestDuplicatesShareOneDocument(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.write("x/one.bin", "dup")
	b.write("y/two.bin", "dup")
	b.write("z/three.bin", "dup")
	if st := b.sync(); st.Added != 3 || st.NewDocs != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if d := b.live(id); d.Copies != 3 || !slices.Equal(d.PathsList, []string{"x/one.bin", "y/two.bin", "z/three.bin"}) {
		t.Fatalf("duplicate doc: %+v", d)
	}
	b.takeOutbox()
	b.remove("y") // the directory goes too: an emptied directory would be held
	st := b.sync()
	if st.Deleted != 1 || st.MissingDocs != 0 {
		t.Fatalf("stats: %+v", st)
	}
	if d := b.live(id); d.Copies != 2 {
		t.Fatalf("after deleting one copy: %+v", d)
	}
	if keys := b.takeOutbox(); !slices.Equal(keys, []string{catalog.DocKey(id), catalog.PathKey("y/two.bin")}) {
		t.Fatalf("outbox keys %v", keys)
	}
	b.write("other.txt", "keeps the root from looking unmounted")
	b.remove("x")
	b.remove("z")
	st = b.sync()
	if st.MissingDocs != 1 || st.Deleted != 2 || b.state(id) != catalog.DocRetired {
		t.Fatalf("after deleting the last copy: %+v, state %v", st, b.state(id))
	}
}

// A symlink to a file is a path of the target's document; a symlinked directory is not
// followed; a broken symlink is a per-file error that does not stop the sync.
func TestSymlinks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.write("real/target.txt", "target bytes")
	for link, target := range map[string]string{"link.txt": "real/target.txt", "linkdir": "real", "broken.txt": "nowhere.txt"} {
		if err := os.Symlink(target, b.abs(link)); err != nil {
			t.Fatal(err)
		}
	}
	st := b.sync()
	if d := b.live(id); !slices.Equal(d.PathsList, []string{"link.txt", "real/target.txt"}) {
		t.Fatalf("paths: %v (a symlinked directory must not be followed)", d.PathsList)
	}
	if st.Errors != 1 {
		t.Fatalf("broken symlink: errors %d, want 1", st.Errors)
	}
}

// Only regular files are read: a FIFO (which would block a reader) is left alone.
func TestSpecialFilesAreNotRead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write("ok.txt", "fine")
	if err := syscall.Mkfifo(b.abs("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := b.sync(); st.Added != 1 || st.Hashed != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if got := b.paths(); !slices.Equal(got, []string{"ok.txt"}) {
		t.Fatalf("paths %v", got)
	}
}

// Status markers, wherever they are, and the SkipRel directories (metadata, state) are never
// recorded.
func TestMarkersAndSkippedDirectoriesAreNeverRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *filesync.Config) { c.SkipRel = []string{"meta", "", "state/db"} })
	b.write("Foo-status-ready", "x")
	b.write("sub/Bar-status-pending", "x")
	b.write("archive/Baz-status-ready", "x")
	b.write("meta/by-id/0000000000000000/document.json", "{}")
	b.write("metadata.txt", "not under meta/")
	b.write("state/db/catalog.db", "x")
	b.write("state/other.txt", "y")
	b.sync()
	if got, want := b.paths(), []string{"metadata.txt", "state/other.txt"}; !slices.Equal(got, want) {
		t.Fatalf("paths %v, want %v", got, want)
	}
}

// Names are bytes: paths that are not UTF-8, hold a newline or fill NAME_MAX are recorded byte
// for byte, found unchanged by the next sync, and removed by their exact bytes.
func TestNamesAreBytes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	names := []string{"bad\xff\xfename.txt", "caf\xe9.txt", "d\xe9/" + strings.Repeat("\xe9", 251) + ".txt", "new\nline.txt"}
	for i, n := range names {
		b.write(n, "content "+string(rune('a'+i)))
	}
	b.write("keep.txt", "keep")
	if st := b.sync(); st.Added != len(names)+1 || st.Errors != 0 {
		t.Fatalf("stats: %+v", st)
	}
	for i, n := range names {
		if id, ok, err := b.cat.FileDoc(b.ctx, n); err != nil || !ok || id != idOf("content "+string(rune('a'+i))) {
			t.Errorf("FileDoc(%q) = %q, %v, %v", n, id, ok, err)
		}
	}
	if st := b.sync(); st.Unchanged != len(names)+1 || st.Hashed != 0 {
		t.Fatalf("re-sync: %+v", st)
	}
	b.remove(names[0])
	if st := b.sync(); st.Deleted != 1 || st.MissingDocs != 1 {
		t.Fatalf("after removing %q: %+v", names[0], st)
	}
	if _, ok, _ := b.cat.FileDoc(b.ctx, names[0]); ok {
		t.Fatalf("%q still recorded", names[0])
	}
}

// A file modified less than SettleTime ago is not read: a new one waits, a changed one keeps
// its old row, and a later sync takes both once their mtime is old enough.
func TestFilesBeingWrittenAreLeftForLater(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *filesync.Config) { c.SettleTime = 30 * time.Minute })
	b.writeAged("settled.txt", "settled")
	b.write("growing.txt", "first part")
	st := b.sync()
	if st.Added != 1 || st.Unsettled != 1 {
		t.Fatalf("added %d unsettled %d, want 1 and 1", st.Added, st.Unsettled)
	}
	if _, ok := b.files()["growing.txt"]; ok {
		t.Fatal("a file being written was recorded")
	}
	before := b.files()["settled.txt"]
	b.write("settled.txt", "being rewritten")
	b.writeAged("growing.txt", "first part, second part")
	st = b.sync()
	if st.Added != 1 || st.Modified != 0 || st.Deleted != 0 || st.Unsettled != 1 {
		t.Fatalf("second sync %+v, want growing.txt added, settled.txt left alone", st)
	}
	if got := b.files()["settled.txt"]; got != before {
		t.Fatalf("the row of a file being rewritten changed: %+v, was %+v", got, before)
	}
	b.setMtime("settled.txt", time.Now().Add(-2*time.Hour))
	if st = b.sync(); st.Modified != 1 || st.Unsettled != 0 {
		t.Fatalf("third sync %+v, want settled.txt modified once settled", st)
	}
}

// The sync meets the catalog's rows in path order: names that sort around a directory's
// ("a-b" and "a.b" before "a/", "a0" after) keep their rows, and only the removed paths go
// (each directory keeps a file: an emptied one would be held, not removed), each with its
// path: key dirtied so that the outbox drops its link.
func TestResyncFindsRemovalsAmongInterleavedNames(t *testing.T) {
	t.Parallel()
	b := setup(t)
	names := []string{"a-b", "a.b", "a/b", "a/c/d", "a/c/e", "a0", "b\xff", "z/y/w", "z/y/x"}
	for i, n := range names {
		b.write(n, strings.Repeat("n", i+1))
	}
	if st := b.sync(); st.Added != len(names) {
		t.Fatalf("first sync: %+v", st)
	}
	b.takeOutbox()
	removed := []string{"a.b", "a/c/d", "z/y/x"}
	for _, n := range removed {
		b.remove(n)
	}
	st := b.sync()
	if st.Deleted != 3 || st.Unchanged != len(names)-3 || st.Hashed != 0 {
		t.Fatalf("re-sync: %+v, want 3 deleted, %d unchanged, nothing hashed", st, len(names)-3)
	}
	kept := []string{"a-b", "a/b", "a/c/e", "a0", "b\xff", "z/y/w"}
	if got := b.paths(); !slices.Equal(got, kept) {
		t.Fatalf("catalog paths %q, want %q", got, kept)
	}
	keys := b.takeOutbox()
	for _, n := range removed {
		if !slices.Contains(keys, catalog.PathKey(n)) {
			t.Errorf("path %q removed without its path: key in the outbox (%q)", n, keys)
		}
	}
}

// New paths are recorded many to a statement, to the same end as one at a time: content seen
// several times in one sync, within a statement and across statements, is one document with
// every path; content that comes back among new paths is live again with its chain state;
// every new path has its document's and its own outbox key.
func TestManyNewPathsAreRecordedAsIfOneAtATime(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *filesync.Config) { c.FirstModule = func() string { return "m1" } })
	b.write("keep.txt", "keep")
	back := b.write("old/x.txt", "comes back")
	b.sync()
	b.remove("old")
	if st := b.sync(); st.MissingDocs != 1 {
		t.Fatalf("stats: %+v", st)
	}
	b.takeOutbox()
	const files, distinct = 70, 20 // f020… repeat f000…f019, in the same statement and later ones
	ids := map[string][]string{}   // document id → its paths
	var want []string
	for i := range files {
		rel := fmt.Sprintf("f%03d.txt", i)
		id := b.write(rel, fmt.Sprintf("content %d", i%distinct))
		ids[id] = append(ids[id], rel)
		want = append(want, catalog.PathKey(rel))
	}
	b.write("f025r.txt", "comes back") // sorts between f025.txt and f026.txt
	ids[back] = []string{"f025r.txt"}
	want = append(want, catalog.PathKey("f025r.txt"))
	for id := range ids {
		want = append(want, catalog.DocKey(id))
	}
	st := b.sync()
	if st.Added != files+1 || st.NewDocs != distinct || st.ReturnedDocs != 1 || st.Errors != 0 {
		t.Fatalf("stats: %+v", st)
	}
	for id, paths := range ids {
		if d := b.live(id); d.Copies != len(paths) || !slices.Equal(d.PathsList, paths) || d.Next != "m1" {
			t.Errorf("document %s: copies %d, paths %v, next %q; want %d, %v, m1", id, d.Copies, d.PathsList, d.Next, len(paths), paths)
		}
	}
	slices.Sort(want)
	if got := b.takeOutbox(); !slices.Equal(got, want) {
		t.Errorf("outbox keys %v\nwant %v", got, want)
	}
}
