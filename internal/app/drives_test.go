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

// A legacy metadata directory is imported when the app opens: the documents of a drive that is
// absent stay searchable (offline) and its marker is untouched. The drive rules are specified
// in internal/filesync.
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

// ARCHIVE_DIRECTORY moved reaches the syncer, the markers and the index: paths
// re-derived, links follow, markers in the new place.
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
