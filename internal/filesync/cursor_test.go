package filesync

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/catalog"
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

// cursorReaders counts the cursor's reader goroutines still alive.
func cursorReaders() int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "filesync.openCursor.func")
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
// read snapshot, even when the reader is blocked on a full channel.
func TestCursorStopEndsReader(t *testing.T) {
	cat := cursorCatalog(t, 20*cursorBatch)
	before := cursorReaders()
	c := openCursor(context.Background(), cat)
	if _, ok := c.passTo("p00003", func(catalog.File) {}); !ok {
		t.Fatal("row p00003 not found")
	}
	c.stop()
	if n := cursorReaders(); n != before {
		t.Fatalf("%d cursor readers alive after stop, want %d", n, before)
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
