package app

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

const oldStamp = "2025-01-01T00:00:00Z"

func (e *testEnv) writeMarker(drive, state, content string) {
	e.t.Helper()
	p := filepath.Join(e.root, "archive", drive+"-status-"+state)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func legacyDoc(id string, next string, paths ...string) map[string]any {
	ps := map[string]any{}
	for _, p := range paths {
		ps[p] = 1.0
	}
	return map[string]any{"id": id, "paths": ps, "paths_list": paths, "mtime": 1.0, "size": 1,
		"type": "text/plain", "copies": len(paths), "version": 1, "next": next}
}

// F3 s1: a file on a mounted drive: ready marker, document online.
func TestDriveMountedGetsReadyMarker(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("archive/drive1/foo.txt", "hi")
	e.sync()
	if s, c := e.marker("drive1"); s != "ready" || len(c) != len("2006-01-02T15:04:05Z") {
		t.Fatalf("marker %q %q", s, c)
	}
	if d := e.doc(id); d.Offline || !d.HasArchivePaths {
		t.Fatalf("doc: %+v", d)
	}
}

// F3 s2 and s7: an absent drive's documents stay (offline) and its marker is untouched.
func TestAbsentDriveKeepsDocumentsAndMarker(t *testing.T) {
	e := newTestEnv(t)
	e.writeMarker("drive1", "ready", oldStamp)
	e.seedLegacy(legacyDoc("hash1", "", "archive/drive1/foo.txt"))
	e.seedLegacy(legacyDoc("hash7", "", "archive/drive1/baz.txt", "baz.txt"))
	e.sync()
	if s, c := e.marker("drive1"); s != "ready" || c != oldStamp {
		t.Fatalf("marker changed: %q %q", s, c)
	}
	d := e.doc("hash1")
	if !d.Offline || !e.indexed("hash1") {
		t.Fatalf("hash1: offline %v indexed %v", d.Offline, e.indexed("hash1"))
	}
	// baz.txt is not on a drive and does not exist: that path goes; the drive path stays.
	d7 := e.doc("hash7")
	if !d7.Offline || !reflect.DeepEqual(d7.PathsList, []string{"archive/drive1/baz.txt"}) {
		t.Fatalf("hash7: %+v", d7)
	}
}

// F3 s3: a present drive whose content changed gets its marker rewritten; the seeded document
// whose id does not match the file's content is superseded by the real one.
func TestPresentDriveMarkerRewrittenOnChange(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("archive/drive1/foo.txt", "hi")
	e.writeMarker("drive1", "ready", oldStamp)
	e.seedLegacy(legacyDoc("hash1", "", "archive/drive1/foo.txt"))
	e.sync()
	if s, c := e.marker("drive1"); s != "ready" || c == oldStamp {
		t.Fatalf("marker not rewritten: %q %q", s, c)
	}
	if d := e.doc(id); d.Offline {
		t.Fatal("real document offline")
	}
	if e.indexed("hash1") {
		t.Fatal("superseded legacy document still indexed")
	}
}

// F3 s4: an empty drive directory is an absent drive; with no documents its marker goes.
func TestEmptyDriveWithoutDocumentsLosesMarker(t *testing.T) {
	e := newTestEnv(t)
	os.MkdirAll(e.abs("archive/drive1"), 0o755)
	e.writeMarker("drive1", "ready", oldStamp)
	e.sync()
	if s, _ := e.marker("drive1"); s != "" {
		t.Fatalf("marker %q kept for an unreferenced drive", s)
	}
	if ids := e.search("", ""); len(ids) != 0 {
		t.Fatalf("indexed: %v", ids)
	}
}

// F3 s5: a document on a present drive with a module still due keeps the drive pending.
func TestPendingDocumentMakesDrivePending(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("archive/drive1/bar.txt", "bar")
	e.seedLegacy(legacyDoc(id, "mod", "archive/drive1/bar.txt"))
	e.sync()
	if s, _ := e.marker("drive1"); s != "pending" {
		t.Fatalf("marker %q, want pending", s)
	}
	if d := e.doc(id); d.Offline || d.Next != "mod" {
		t.Fatalf("doc: %+v", d)
	}
}

// F3 s6: the same bytes on a drive and outside it: one document, online, drive ready.
func TestDuplicateAcrossDriveAndFiles(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("archive/drive1/baz.txt", "same")
	e.write("baz.txt", "same")
	e.sync()
	entries, _ := os.ReadDir(filepath.Join(e.meta, "by-id"))
	if len(entries) != 1 {
		t.Fatalf("%d by-id dirs", len(entries))
	}
	if d := e.doc(id); d.Offline || d.Copies != 2 || !d.HasArchivePaths {
		t.Fatalf("doc: %+v", d)
	}
	if s, _ := e.marker("drive1"); s != "ready" {
		t.Fatalf("marker %q", s)
	}
}

// F3 s8: markers of drives nothing references are removed; a drive's files get links.
func TestUnreferencedDriveMarkerRemoved(t *testing.T) {
	e := newTestEnv(t)
	e.writeMarker("drive1", "ready", "old")
	id := e.write("archive/drive2/foo.txt", "foo")
	e.sync()
	if s, _ := e.marker("drive1"); s != "" {
		t.Fatal("drive1 marker kept")
	}
	if s, _ := e.marker("drive2"); s != "ready" {
		t.Fatal("drive2 not ready")
	}
	if e.link("archive/drive2/foo.txt") != id {
		t.Fatal("no by-path link")
	}
}

// F3 s9: one drive present, another absent with a document: each handled on its own.
func TestPresentAndAbsentDrives(t *testing.T) {
	e := newTestEnv(t)
	id1 := e.write("archive/drive1/a.txt", "a")
	e.writeMarker("drive2", "ready", "old")
	e.seedLegacy(legacyDoc("hash2", "", "archive/drive2/b.txt"))
	e.sync()
	if s, _ := e.marker("drive1"); s != "ready" {
		t.Fatal("drive1 not ready")
	}
	if s, c := e.marker("drive2"); s != "ready" || c != "old" {
		t.Fatalf("drive2 marker changed: %q %q", s, c)
	}
	if e.doc(id1).Offline || !e.doc("hash2").Offline {
		t.Fatal("offline flags wrong")
	}
}

// F3 s10: ARCHIVE_DIRECTORY moved: paths re-derived, links follow, markers in the new place.
func TestArchiveDirectoryMoved(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("archive/drive1/foo.txt", "foo")
	e.sync()
	e.close()
	if err := os.Rename(e.abs("archive"), e.abs("archive2")); err != nil {
		t.Fatal(err)
	}
	e.vars["ARCHIVE_DIRECTORY"] = e.abs("archive2")
	e.open()
	e.sync()
	if e.link("archive2/drive1/foo.txt") != id || e.link("archive/drive1/foo.txt") != "" {
		t.Fatal("links not moved")
	}
	if _, err := os.Stat(e.abs("archive2/drive1-status-ready")); err != nil {
		t.Fatal("no marker in the new archive dir")
	}
	if d := e.doc(id); d.Offline || !reflect.DeepEqual(d.PathsList, []string{"archive2/drive1/foo.txt"}) {
		t.Fatalf("doc: %+v", d)
	}
}

// Unplug and replug: documents stay searchable offline, marker untouched, back online after.
func TestUnplugAndReplugDrive(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("archive/drive1/photo.jpg", "jpeg bytes")
	e.sync()
	_, stamp := e.marker("drive1")
	e.remove("archive/drive1/photo.jpg") // the mount point stays, empty: an absent drive
	e.sync()
	if d := e.doc(id); !d.Offline || d.Copies != 1 || !e.indexed(id) {
		t.Fatalf("unplugged: %+v", d)
	}
	if got := e.search("", "offline = true"); !reflect.DeepEqual(got, []string{id}) {
		t.Fatalf("offline filter: %v", got)
	}
	if _, c := e.marker("drive1"); c != stamp {
		t.Fatal("marker of an absent drive changed")
	}
	e.write("archive/drive1/photo.jpg", "jpeg bytes")
	e.sync()
	if e.doc(id).Offline {
		t.Fatal("still offline after replug")
	}
}

// A drive whose label changed: the old drive's paths and marker go, the new drive takes over.
func TestRenamedDrive(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("archive/usb-old/a.txt", "a")
	id2 := e.write("archive/usb-old/sub/b.txt", "b")
	e.sync()
	if err := os.Rename(e.abs("archive/usb-old"), e.abs("archive/usb-new")); err != nil {
		t.Fatal(err)
	}
	e.sync()
	if s, _ := e.marker("usb-old"); s != "" {
		t.Fatal("old drive marker kept")
	}
	if s, _ := e.marker("usb-new"); s != "ready" {
		t.Fatal("new drive not ready")
	}
	if d := e.doc(id); !reflect.DeepEqual(d.PathsList, []string{"archive/usb-new/a.txt"}) || d.Offline {
		t.Fatalf("doc: %+v", d)
	}
	if d := e.doc(id2); d.Copies != 1 {
		t.Fatalf("doc2: %+v", d)
	}
}

// F3 s11: a marker file alone is never indexed.
func TestMarkerAloneNotIndexed(t *testing.T) {
	e := newTestEnv(t)
	e.writeMarker("Foo", "ready", "x")
	e.sync()
	if got := e.search("", `paths_list = "archive/Foo-status-ready"`); len(got) != 0 {
		t.Fatal("marker indexed")
	}
}

// A marker that cannot be written (read-only tree) is logged; the sync still completes.
func TestMarkerWriteFailureDoesNotFailSync(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("archive/drive1/a.txt", "a")
	// A non-empty directory where the marker goes makes the rename fail, even as root.
	os.MkdirAll(e.abs("archive/drive1-status-ready/blocker"), 0o755)
	e.sync()
	if !e.indexed(id) {
		t.Fatal("sync did not complete")
	}
	if e.app.Markers.Errors() == 0 {
		t.Fatal("marker failure not counted")
	}
}
