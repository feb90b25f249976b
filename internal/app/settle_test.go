package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/catalog"
)

// A file modified less than SETTLE_TIME ago is not read: a new one waits, a changed one keeps
// its old content's row, and a later sync takes both once their mtime is old enough.
func TestSyncLeavesFilesBeingWrittenForLater(t *testing.T) {
	e := newTestEnv(t, "SETTLE_TIME", "5s")
	old := time.Now().Add(-time.Hour)
	write := func(rel, content string, mtime time.Time) {
		t.Helper()
		p := filepath.Join(e.root, rel)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if !mtime.IsZero() {
			if err := os.Chtimes(p, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("settled.txt", "settled", old)
	write("growing.txt", "first part", time.Time{})
	st := e.sync()
	if st.Added != 1 || st.Unsettled != 1 {
		t.Fatalf("added %d unsettled %d, want 1 and 1", st.Added, st.Unsettled)
	}
	files := catalogPaths(t, e)
	if _, ok := files["growing.txt"]; ok {
		t.Fatal("a file being written was recorded")
	}
	// A known file being rewritten keeps its row as it was.
	before := files["settled.txt"]
	write("settled.txt", "being rewritten", time.Time{})
	write("growing.txt", "first part, second part", old)
	st = e.sync()
	if st.Added != 1 || st.Modified != 0 || st.Deleted != 0 || st.Unsettled != 1 {
		t.Fatalf("second sync %+v, want growing.txt added, settled.txt left alone", st)
	}
	if got := catalogPaths(t, e)["settled.txt"]; got.DocID != before.DocID {
		t.Fatalf("the row of a file being rewritten changed: %+v", got)
	}
	write("settled.txt", "being rewritten", old)
	if st = e.sync(); st.Modified != 1 || st.Unsettled != 0 {
		t.Fatalf("third sync %+v, want settled.txt modified once settled", st)
	}
}

func catalogPaths(t *testing.T, e *testEnv) map[string]catalog.File {
	t.Helper()
	out := map[string]catalog.File{}
	if err := e.app.Catalog.Files(context.Background(), func(f catalog.File) error {
		out[f.Path] = f
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
