package filesync

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/sqlitedb"
)

// cursorCatalog is a catalog with n path rows "p00000".."p<n-1>", all of one document.
func cursorCatalog(t *testing.T, n int) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Open(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	ctx := context.Background()
	err = cat.Update(ctx, func(tx *catalog.Tx) error {
		if _, err := tx.InsertDocument(ctx, catalog.DocRow{ID: "d", Type: "text/plain", Size: 1, Version: 1}); err != nil {
			return err
		}
		for i := range n {
			if err := tx.PutFile(ctx, catalog.File{Path: fmt.Sprintf("p%05d", i), DocID: "d", Ino: uint64(i + 1), Size: int64(i)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// snapshotHeld reports whether some connection still reads an old snapshot of the catalog: a
// TRUNCATE checkpoint, which must wait for every reader of the WAL, then reports busy.
func snapshotHeld(t *testing.T, cat *catalog.Catalog) bool {
	t.Helper()
	db := sqlitedb.Open(cat.Path())
	defer db.Close()
	var busy, logFrames, checkpointed int
	if err := db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &checkpointed); err != nil {
		t.Fatal(err)
	}
	return busy != 0
}

// The cursor's reader runs ahead in batches; the walk must still meet every row once, in
// order, whether the row is found, passed by, or left for rest, across batch boundaries.
func TestCursorMeetsEveryRowInOrder(t *testing.T) {
	n := 5*cursorBatch + 17
	cat := cursorCatalog(t, n)
	c := openCursor(context.Background(), cat)
	defer c.stop()
	var passed []string
	pass := func(f catalog.File) { passed = append(passed, f.Path) }
	found := 0
	// Walk every third path, plus names between and beyond the rows.
	for i := 0; i < n; i += 3 {
		rel := fmt.Sprintf("p%05d", i)
		f, ok := c.passTo(rel, pass)
		if !ok || f.Path != rel || f.Ino != uint64(i+1) || f.Size != int64(i) {
			t.Fatalf("passTo(%s) = %+v %v", rel, f, ok)
		}
		found++
		if _, ok := c.passTo(rel+"a", pass); ok {
			t.Fatalf("passTo(%sa) found a row that does not exist", rel)
		}
	}
	c.rest(pass)
	if c.err != nil {
		t.Fatal(c.err)
	}
	if found+len(passed) != n {
		t.Fatalf("found %d and passed %d rows, want %d in all", found, len(passed), n)
	}
	for k, p := range passed {
		i := k/2*3 + k%2 + 1 // the two rows after each walked one
		if want := fmt.Sprintf("p%05d", i); p != want {
			t.Fatalf("passed[%d] = %s, want %s", k, p, want)
		}
	}
}

// A walk that stops early (an error, a cancelled sync) leaves no reader behind holding its
// read snapshot, even when the reader is blocked on a full channel: stop returns only once the
// reader has closed its rows.
func TestCursorStopReleasesSnapshot(t *testing.T) {
	cat := cursorCatalog(t, 20*cursorBatch) // more than the channel holds: the reader blocks
	ctx := context.Background()
	c := openCursor(ctx, cat)
	if _, ok := c.passTo("p00003", func(catalog.File) {}); !ok {
		t.Fatal("row p00003 not found")
	}
	// A write after the reader's snapshot, so the checkpoint has a reader to wait for.
	err := cat.Update(ctx, func(tx *catalog.Tx) error {
		return tx.PutFile(ctx, catalog.File{Path: "q", DocID: "d", Ino: 1, Size: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	if !snapshotHeld(t, cat) {
		t.Fatal("the checkpoint saw no reader while the cursor was open; the test cannot see a leak")
	}
	c.stop()
	if snapshotHeld(t, cat) {
		t.Fatal("the cursor's read snapshot is still held after stop")
	}
	if c.err != nil {
		t.Fatalf("a stopped cursor reports %v", c.err)
	}
}

// A reader that fails hands its error to the walk once its rows run out.
func TestCursorReportsReadError(t *testing.T) {
	cat := cursorCatalog(t, 40*cursorBatch) // more than the channel holds: the reader is still reading
	ctx, cancel := context.WithCancel(context.Background())
	c := openCursor(ctx, cat)
	defer c.stop()
	cancel()
	c.rest(func(catalog.File) {})
	if c.err == nil {
		t.Fatal("no error from a reader whose context was cancelled mid-read")
	}
}
