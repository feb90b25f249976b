package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/filesync"
)

// moduleOutput writes a file into a document's by-id directory, as a module would.
func (e *testEnv) moduleOutput(id string) string {
	e.t.Helper()
	p := filepath.Join(e.meta, "by-id", id, "mod", "out.txt")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("hours of module work"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *testEnv) missingState() filesync.MissingState {
	e.t.Helper()
	st, err := e.app.Missing(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

func TestEmptiedRootDeletesNothing(t *testing.T) {
	e := newTestEnv(t)
	a := e.write("a/one.txt", "one")
	b := e.write("b/two.txt", "two")
	e.sync()
	out := e.moduleOutput(a)
	e.remove("a")
	e.remove("b") // the root is empty now: what an unmounted share looks like
	st := e.sync()
	if st.Held != 2 || st.Deleted != 0 || st.MissingDocs != 0 {
		t.Fatalf("stats: %+v", st)
	}
	for _, id := range []string{a, b} {
		if !e.indexed(id) || !e.hasDir(id) {
			t.Fatalf("%s: indexed %v dir %v", id, e.indexed(id), e.hasDir(id))
		}
	}
	if e.link("a/one.txt") != a {
		t.Fatal("by-path link removed")
	}
	ms := e.missingState()
	if r := ms.Report; r == nil || len(r.HeldDirs) != 1 || r.HeldDirs[0].Dir != "" || r.HeldDirs[0].Reason != "empty" || r.HeldDirs[0].Files != 2 {
		t.Fatalf("report: %+v", ms.Report)
	}
	// The files come back: nothing is new, the module output is still there.
	e.write("a/one.txt", "one")
	e.write("b/two.txt", "two")
	st = e.sync()
	if st.NewDocs != 0 || st.Held != 0 {
		t.Fatalf("after return: %+v", st)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("module output: %v", err)
	}
	if r := e.missingState().Report; len(r.HeldDirs) != 0 {
		t.Fatalf("still held: %+v", r)
	}
}

func TestEmptiedSubdirectoryDeletesNothing(t *testing.T) {
	e := newTestEnv(t)
	e.write("top.txt", "top")
	a := e.write("nas/photos/one.jpg", "photo one")
	b := e.write("nas/two.txt", "two")
	e.sync()
	e.remove("nas")
	if err := os.Mkdir(e.abs("nas"), 0o755); err != nil { // the mount point stays, empty
		t.Fatal(err)
	}
	st := e.sync()
	if st.Held != 2 || st.MissingDocs != 0 || !e.indexed(a) || !e.indexed(b) {
		t.Fatalf("stats: %+v", st)
	}
	if r := e.missingState().Report; len(r.HeldDirs) != 1 || r.HeldDirs[0].Dir != "nas" {
		t.Fatalf("report: %+v", r)
	}
}

func TestVanishedRootDeletesNothing(t *testing.T) {
	e := newTestEnv(t)
	a := e.write("a.txt", "a")
	e.sync()
	e.remove("")
	st := e.sync()
	if st.Held != 1 || !e.indexed(a) {
		t.Fatalf("stats: %+v", st)
	}
	if r := e.missingState().Report; len(r.HeldDirs) != 1 || r.HeldDirs[0].Reason != "unreadable" {
		t.Fatalf("report: %+v", r)
	}
}

func TestDeletedFileGoesMissingThenIsPurged(t *testing.T) {
	e := newTestEnv(t, "MISSING_RETENTION", "1h")
	e.write("keep.txt", "keep")
	id := e.write("gone.txt", "gone")
	e.sync()
	out := e.moduleOutput(id)
	e.remove("gone.txt")
	st := e.sync()
	if st.MissingDocs != 1 || e.indexed(id) || !e.hasDir(id) || e.link("gone.txt") != "" {
		t.Fatalf("stats %+v indexed %v dir %v", st, e.indexed(id), e.hasDir(id))
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("module output: %v", err)
	}
	if ms := e.missingState(); ms.Documents != 1 {
		t.Fatalf("missing: %+v", ms)
	}
	// Not expired yet: nothing purged.
	if n, err := e.app.PurgeMissing(e.ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("purge before retention: %d %v", n, err)
	}
	n, err := e.app.PurgeMissing(e.ctx, time.Now().Add(2*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	e.sync() // drains the outbox and verifies
	if e.hasDir(id) {
		t.Fatal("by-id directory of a purged document kept")
	}
	if ms := e.missingState(); ms.Documents != 0 || ms.Purged != 1 {
		t.Fatalf("missing after purge: %+v", ms)
	}
}

func TestMovedContentComesBackWithItsOutput(t *testing.T) {
	e := newTestEnv(t)
	e.write("keep.txt", "keep")
	id := e.write("old/name.txt", "moving content")
	e.sync()
	out := e.moduleOutput(id)
	e.remove("old")
	if st := e.sync(); st.MissingDocs != 1 {
		t.Fatalf("stats: %+v", st)
	}
	e.write("new/place/renamed.txt", "moving content")
	st := e.sync()
	if st.NewDocs != 0 || st.ReturnedDocs != 1 || !e.indexed(id) {
		t.Fatalf("stats %+v indexed %v", st, e.indexed(id))
	}
	if d := e.doc(id); len(d.PathsList) != 1 || d.PathsList[0] != "new/place/renamed.txt" {
		t.Fatalf("paths: %v", d.PathsList)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("module output: %v", err)
	}
	if ms := e.missingState(); ms.Documents != 0 {
		t.Fatalf("missing: %+v", ms)
	}
}

func TestMassRemovalIsHeldUntilConfirmed(t *testing.T) {
	e := newTestEnv(t, "MISSING_HOLD_MIN", "3", "MISSING_HOLD_SHARE", "20%")
	var ids []string
	for i := range 10 {
		ids = append(ids, e.write(filepath.Join("d", string(rune('a'+i))+".txt"), "content "+string(rune('a'+i))))
	}
	e.sync()
	for i := range 5 {
		e.remove(filepath.Join("d", string(rune('a'+i))+".txt"))
	}
	st := e.sync()
	if st.HeldRemovals != 5 || st.MissingDocs != 0 || st.Deleted != 0 {
		t.Fatalf("stats: %+v", st)
	}
	ms := e.missingState()
	if ms.Report.Hold == nil || ms.Report.Hold.Documents != 5 || ms.Report.Hold.Live != 10 {
		t.Fatalf("hold: %+v", ms.Report)
	}
	since := ms.Report.Hold.Since
	if st := e.sync(); st.HeldRemovals != 5 { // still held, same hold
		t.Fatalf("second sync: %+v", st)
	}
	if h := e.missingState().Report.Hold; h == nil || !h.Since.Equal(since) {
		t.Fatalf("hold since changed: %+v", h)
	}
	for _, id := range ids {
		if !e.indexed(id) {
			t.Fatalf("%s left the index while held", id)
		}
	}
	if err := e.app.ConfirmMissing(e.ctx); err != nil {
		t.Fatal(err)
	}
	if !e.missingState().Confirm {
		t.Fatal("confirmation not recorded")
	}
	st = e.sync()
	if st.MissingDocs != 5 || st.HeldRemovals != 0 {
		t.Fatalf("confirmed sync: %+v", st)
	}
	ms = e.missingState()
	if ms.Report.Hold != nil || ms.Confirm || ms.Documents != 5 {
		t.Fatalf("after confirmation: %+v", ms)
	}
	// A small removal is not held.
	e.remove("d/f.txt")
	if st := e.sync(); st.MissingDocs != 1 || st.HeldRemovals != 0 {
		t.Fatalf("small removal: %+v", st)
	}
}
