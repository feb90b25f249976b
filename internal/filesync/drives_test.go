package filesync_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/drives"
	"github.com/homeindex/homeindex/internal/filesync"
	"github.com/homeindex/homeindex/internal/metadata"
	"github.com/homeindex/homeindex/protocol"
)

const oldStamp = "2025-01-01T00:00:00Z"

// A file on a mounted drive: the drive is recorded present, announced, its marker is ready
// and its document online with archive paths.
func TestMountedDriveGetsReadyMarker(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.write("archive/drive1/foo.txt", "hi")
	b.sync()
	if s, c := b.marker("drive1"); s != drives.Ready || len(c) != len("2006-01-02T15:04:05Z") {
		t.Fatalf("marker %q %q", s, c)
	}
	if d := b.live(id); d.Offline || !d.HasArchivePaths {
		t.Fatalf("doc: %+v", d)
	}
	if f := b.files()["archive/drive1/foo.txt"]; f.Drive != "drive1" {
		t.Fatalf("row: %+v", f)
	}
	if ds, _ := b.cat.Drives(b.ctx); !ds["drive1"] {
		t.Fatalf("drives %v", ds)
	}
	if !slices.Contains(b.appeared, "drive1") {
		t.Fatalf("DriveAppeared calls %v", b.appeared)
	}
	n := len(b.appeared)
	b.sync()
	if len(b.appeared) != n {
		t.Fatalf("an unchanged sync announced drives again: %v", b.appeared)
	}
}

// An absent drive's paths stay (offline) and its marker is untouched; a path on no drive
// that does not exist goes.
func TestAbsentDriveKeepsPathsAndMarker(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.writeMarker("drive1", drives.Ready, oldStamp)
	b.putDoc("hash1", "", "archive/drive1/foo.txt")
	b.putDoc("hash7", "", "archive/drive1/baz.txt", "baz.txt")
	st := b.sync()
	if st.KeptOffline != 2 || st.Deleted != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if s, c := b.marker("drive1"); s != drives.Ready || c != oldStamp {
		t.Fatalf("marker changed: %q %q", s, c)
	}
	if d := b.live("hash1"); !d.Offline {
		t.Fatalf("hash1: %+v", d)
	}
	if d := b.live("hash7"); !d.Offline || !slices.Equal(d.PathsList, []string{"archive/drive1/baz.txt"}) {
		t.Fatalf("hash7: %+v", d)
	}
}

// A present drive whose content changed gets its marker rewritten with the time; a row whose
// document does not match the file's content is superseded.
func TestPresentDriveMarkerRewrittenOnChange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.write("archive/drive1/foo.txt", "hi")
	b.writeMarker("drive1", drives.Ready, oldStamp)
	b.putDoc("hash1", "", "archive/drive1/foo.txt")
	b.sync()
	if s, c := b.marker("drive1"); s != drives.Ready || c == oldStamp {
		t.Fatalf("marker not rewritten: %q %q", s, c)
	}
	if d := b.live(id); d.Offline {
		t.Fatal("real document offline")
	}
	if s := b.state("hash1"); s != catalog.DocRetired {
		t.Fatalf("superseded document state %v, want retired", s)
	}
}

// An empty drive directory is an absent drive; with no path on it its marker goes.
func TestEmptyDriveWithoutPathsLosesMarker(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mkdir("archive/drive1")
	b.writeMarker("drive1", drives.Ready, oldStamp)
	b.sync()
	if s, _ := b.marker("drive1"); s != "" {
		t.Fatalf("marker %q kept for an unreferenced drive", s)
	}
	if got := b.paths(); len(got) != 0 {
		t.Fatalf("recorded %v", got)
	}
}

// A document on a present drive with a module still due keeps the drive pending.
func TestPendingDocumentMakesDrivePending(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *filesync.Config) { c.FirstModule = func() string { return "mod" } })
	id := b.write("archive/drive1/bar.txt", "bar")
	b.sync()
	if s, _ := b.marker("drive1"); s != drives.Pending {
		t.Fatalf("marker %q, want pending", s)
	}
	if d := b.live(id); d.Offline || d.Next != "mod" {
		t.Fatalf("doc: %+v", d)
	}
}

// The same bytes on a drive and outside it: one document, online, drive ready.
func TestDuplicateAcrossDriveAndFiles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.write("archive/drive1/baz.txt", "same")
	b.write("baz.txt", "same")
	if st := b.sync(); st.NewDocs != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if d := b.live(id); d.Offline || d.Copies != 2 || !d.HasArchivePaths {
		t.Fatalf("doc: %+v", d)
	}
	if s, _ := b.marker("drive1"); s != drives.Ready {
		t.Fatalf("marker %q", s)
	}
}

// Markers of drives nothing references are removed; one drive present and another absent
// with a path are each handled on their own.
func TestPresentAndAbsentDrives(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id1 := b.write("archive/drive1/a.txt", "a")
	b.writeMarker("drive2", drives.Ready, "old")
	b.writeMarker("drive3", drives.Pending, "old")
	b.putDoc("hash2", "", "archive/drive2/b.txt")
	b.sync()
	if s, _ := b.marker("drive1"); s != drives.Ready {
		t.Fatal("drive1 not ready")
	}
	if s, c := b.marker("drive2"); s != drives.Ready || c != "old" {
		t.Fatalf("drive2 marker changed: %q %q", s, c)
	}
	if s, _ := b.marker("drive3"); s != "" {
		t.Fatal("drive3 marker kept")
	}
	if b.live(id1).Offline || !b.live("hash2").Offline {
		t.Fatal("offline flags wrong")
	}
}

// ARCHIVE_DIRECTORY moved: every path's drive is derived again; markers are written in the new
// place.
func TestArchiveDirectoryMoved(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.write("archive/drive1/foo.txt", "foo")
	b.sync()
	if err := os.Rename(b.abs("archive"), b.abs("archive2")); err != nil {
		t.Fatal(err)
	}
	b.cfg.ArchiveRel = "archive2"
	b.open()
	b.sync()
	if got := b.paths(); !slices.Equal(got, []string{"archive2/drive1/foo.txt"}) {
		t.Fatalf("paths %v", got)
	}
	if f := b.files()["archive2/drive1/foo.txt"]; f.Drive != "drive1" {
		t.Fatalf("row %+v", f)
	}
	if _, err := os.Stat(b.abs("archive2/drive1-status-ready")); err != nil {
		t.Fatal("no marker in the new archive dir")
	}
	if d := b.live(id); d.Offline {
		t.Fatalf("doc: %+v", d)
	}
	if v, _, _ := b.cat.Meta(b.ctx, catalog.MetaArchiveRel); v != "archive2" {
		t.Fatalf("archive_rel %q", v)
	}
}

// Unplug and replug: the documents stay (offline), the marker is untouched while absent, and
// the drive is announced again on return.
func TestUnplugAndReplugDrive(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.write("archive/drive1/photo.jpg", "jpeg bytes")
	b.sync()
	_, stamp := b.marker("drive1")
	b.remove("archive/drive1/photo.jpg") // the mount point stays, empty: an absent drive
	b.appeared = nil
	if st := b.sync(); st.KeptOffline != 1 || st.Deleted != 0 {
		t.Fatalf("unplugged: %+v", st)
	}
	if d := b.live(id); !d.Offline || d.Copies != 1 {
		t.Fatalf("unplugged: %+v", d)
	}
	if _, c := b.marker("drive1"); c != stamp {
		t.Fatal("marker of an absent drive changed")
	}
	if len(b.appeared) != 0 {
		t.Fatalf("an unplugged drive announced: %v", b.appeared)
	}
	b.write("archive/drive1/photo.jpg", "jpeg bytes")
	b.sync()
	if b.live(id).Offline {
		t.Fatal("still offline after replug")
	}
	if !slices.Contains(b.appeared, "drive1") {
		t.Fatalf("replugged drive not announced: %v", b.appeared)
	}
}

// A drive whose label changed: the old drive's paths and marker go, the new drive takes over.
func TestRenamedDrive(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.write("archive/usb-old/a.txt", "a")
	id2 := b.write("archive/usb-old/sub/b.txt", "b")
	b.sync()
	if err := os.Rename(b.abs("archive/usb-old"), b.abs("archive/usb-new")); err != nil {
		t.Fatal(err)
	}
	b.sync()
	if s, _ := b.marker("usb-old"); s != "" {
		t.Fatal("old drive marker kept")
	}
	if s, _ := b.marker("usb-new"); s != drives.Ready {
		t.Fatal("new drive not ready")
	}
	if d := b.live(id); !slices.Equal(d.PathsList, []string{"archive/usb-new/a.txt"}) || d.Offline {
		t.Fatalf("doc: %+v", d)
	}
	if d := b.live(id2); d.Copies != 1 {
		t.Fatalf("doc2: %+v", d)
	}
	if ds, _ := b.cat.Drives(b.ctx); len(ds) != 1 || !ds["usb-new"] {
		t.Fatalf("drives %v, want only usb-new", ds)
	}
}

// A marker that cannot be written is counted; the sync still completes.
func TestMarkerWriteFailureDoesNotFailSync(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.write("archive/drive1/a.txt", "a")
	// A non-empty directory where the marker goes makes the rename fail, even as root.
	b.mkdir("archive/drive1-status-ready/blocker")
	b.sync()
	b.live(id)
	if b.markers.Errors() == 0 {
		t.Fatal("marker failure not counted")
	}
}

// Markers.Update follows the catalog: pending while a document on the drive has a module due,
// ready once none has; an absent drive is left alone.
func TestMarkersFollowTheCatalog(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mkdir("archive")
	b.putDoc("doc1", "m1", "archive/d/a.txt")
	if err := b.markers.Update(b.ctx, "d", true, false); err != nil {
		t.Fatal(err)
	}
	if s, _ := b.marker("d"); s != drives.Pending {
		t.Fatalf("marker %q, want pending", s)
	}
	if _, err := b.cat.MoveNext(b.ctx, "m1", ""); err != nil {
		t.Fatal(err)
	}
	if err := b.markers.Update(b.ctx, "d", false, false); err != nil {
		t.Fatal(err)
	}
	if s, _ := b.marker("d"); s != drives.Pending {
		t.Fatalf("absent drive's marker changed to %q", s)
	}
	if err := b.markers.Update(b.ctx, "d", true, false); err != nil {
		t.Fatal(err)
	}
	if s, _ := b.marker("d"); s != drives.Ready {
		t.Fatalf("marker %q, want ready", s)
	}
}

// A legacy metadata directory is imported into an empty catalog once: documents keep their
// module fields and `next`, and the first sync confirms the files by size and mtime without
// reading them (the drive is pending: a module is still due).
func TestImportLegacyThenConfirmWithoutReading(t *testing.T) {
	t.Parallel()
	b := setup(t)
	store, err := metadata.Open(filepath.Join(t.TempDir(), "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	id := b.write("archive/drive1/old.txt", "legacy bytes")
	mt := time.Unix(1700000000, 250000000)
	b.setMtime("archive/drive1/old.txt", mt)
	legacy := `{"id": "` + id + `", "paths": {"archive/drive1/old.txt": 1700000000.25}, "paths_list": ["archive/drive1/old.txt"],
		"mtime": 1700000000.25, "size": 12, "type": "text/plain", "copies": 1, "version": 1, "next": "ocr",
		"caption": "a module field", "text.content": "dropped"}`
	if _, err := store.WriteDocument(id, []byte(legacy)); err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(zerolog.NewTestWriter(t))
	if n, err := filesync.ImportLegacy(b.ctx, b.cat, store, "archive", log); err != nil || n != 1 {
		t.Fatalf("import: %d %v", n, err)
	}
	d := b.live(id)
	if d.Next != "ocr" || string(d.Fields["caption"]) != `"a module field"` || d.Fields["text.content"] != nil || d.Version != protocol.CurrentVersion {
		t.Fatalf("imported: %+v", d)
	}
	if f := b.files()["archive/drive1/old.txt"]; !f.Legacy() || f.Drive != "drive1" {
		t.Fatalf("imported row: %+v", f)
	}
	st := b.sync()
	if st.Hashed != 0 || st.Errors != 0 {
		t.Fatalf("first sync after import: %+v", st)
	}
	if f := b.files()["archive/drive1/old.txt"]; f.Legacy() || f.DocID != id {
		t.Fatalf("row not confirmed: %+v", f)
	}
	if d := b.live(id); d.Next != "ocr" || d.Offline {
		t.Fatalf("after the first sync: %+v", d)
	}
	if s, _ := b.marker("drive1"); s != drives.Pending {
		t.Fatalf("marker %q, want pending: the imported document has a module due", s)
	}
	if n, err := filesync.ImportLegacy(b.ctx, b.cat, store, "archive", log); err != nil || n != 0 {
		t.Fatalf("second import: %d %v", n, err)
	}
}

// A first sync stores each new document's dispatch order with it (a local file's own path) or
// looks it up (a file on a drive, or content found at several paths in one sync): documents on
// present drives come first, each at its drive path; local ones follow, each at its first path.
func TestFirstSyncDispatchOrder(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *filesync.Config) { c.FirstModule = func() string { return "m1" } })
	local := b.write("notes/a.txt", "local only")
	onDrive := b.write("archive/drive1/b.txt", "on the drive")
	both := b.write("c.txt", "local and on the drive")
	b.write("archive/drive1/c.txt", "local and on the drive")
	twice := b.write("x/one.txt", "at two local paths")
	b.write("w/two.txt", "at two local paths")
	b.sync()
	cands, err := b.cat.Candidates(b.ctx, "m1", 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cands {
		got = append(got, c.ID+" "+c.Path)
	}
	want := []string{onDrive + " archive/drive1/b.txt", both + " archive/drive1/c.txt", local + " notes/a.txt", twice + " w/two.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("candidates:\n got %q\nwant %q", got, want)
	}
}
