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

// A deleted file's document goes missing (out of the index, its by-id directory and module
// output kept), PurgeMissing removes it after MISSING_RETENTION, the outbox removes its
// directory, and Missing counts both. The parts are specified in internal/filesync,
// internal/catalog and internal/outbox.
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

// MISSING_HOLD_MIN and MISSING_HOLD_SHARE reach the syncer, the held removal shows in Missing,
// and ConfirmMissing releases it at the next sync. The hold's rules are specified in
// internal/filesync.
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
	if st := e.sync(); st.HeldRemovals != 5 || st.MissingDocs != 0 {
		t.Fatalf("stats: %+v", st)
	}
	if ms := e.missingState(); ms.Report.Hold == nil || ms.Report.Hold.Documents != 5 || ms.Report.Hold.Live != 10 {
		t.Fatalf("hold: %+v", ms.Report)
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
	if st := e.sync(); st.MissingDocs != 5 || st.HeldRemovals != 0 {
		t.Fatalf("confirmed sync: %+v", st)
	}
	if ms := e.missingState(); ms.Report.Hold != nil || ms.Confirm || ms.Documents != 5 {
		t.Fatalf("after confirmation: %+v", ms)
	}
	for _, id := range ids[:5] {
		if e.indexed(id) {
			t.Fatalf("%s still indexed after the confirmed removal", id)
		}
	}
}
