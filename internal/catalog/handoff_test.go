package catalog

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/homeindex/homeindex/protocol"
)

// newDoc is a document a sync creates: one local path, written and dirtied as
// filesync.recordNew does.
func newDoc(ctx context.Context, tx *Tx, id, path string, mtime float64) error {
	row := DocRow{ID: id, Type: "text/plain", Size: 12, Next: "text", Version: protocol.CurrentVersion, LocalPath: path}
	f := File{Path: path, DocID: id, Dev: 1, Ino: 7, Size: 12, MtimeNs: int64(mtime * 1e9), Mtime: mtime}
	if _, err := tx.InsertDocuments(ctx, []DocRow{row}); err != nil {
		return err
	}
	if err := tx.PutFiles(ctx, []File{f}); err != nil {
		return err
	}
	return tx.DirtyNew(ctx, row, f)
}

// takeAll takes the handoff of every pending entry, a page of size at a time, as the applier
// does.
func takeAll(t *testing.T, c *Catalog, size int) (docs map[string]Rendered, paths map[string]string) {
	t.Helper()
	docs, paths = map[string]Rendered{}, map[string]string{}
	var after int64
	for {
		page, err := c.PendingOutbox(context.Background(), after, size)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			return docs, paths
		}
		after = page[len(page)-1].Seq
		h := c.TakeHandoff(page)
		for id, d := range h.Docs {
			docs[id] = d
		}
		for p, id := range h.PathDocs {
			paths[p] = id
		}
	}
}

// A handed document is the document Documents renders from the catalog, field for field, and
// a handed path names the document FileDocs finds for it: names with any bytes, a mtime before
// 1970, pages that split a document's two keys.
func TestHandoffIsWhatTheCatalogRenders(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	paths := []string{"a/plain.txt", "b/with space & <amp>.txt", "c/caf\xc3\xa9.txt", "d/not-utf8-\xff\xfe.bin", `e/quote"back\slash.txt`}
	mtimes := []float64{1714979289.1234, 0.5, -86400.25, 1e9, 2}
	update(t, c, func(ctx context.Context, tx *Tx) error {
		for i, p := range paths {
			if err := newDoc(ctx, tx, fmt.Sprintf("%016x", i+1), p, mtimes[i]); err != nil {
				return err
			}
		}
		return nil
	})
	docs, handedPaths := takeAll(t, c, 3)
	if len(docs) != len(paths) || len(handedPaths) != len(paths) {
		t.Fatalf("handed %d documents and %d paths, want %d each", len(docs), len(handedPaths), len(paths))
	}
	var ids []string
	for i := range paths {
		ids = append(ids, fmt.Sprintf("%016x", i+1))
	}
	fromCatalog, err := c.Documents(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if !reflect.DeepEqual(docs[id], fromCatalog[id]) {
			t.Errorf("%s handed:\n%#v\nthe catalog renders:\n%#v", id, docs[id], fromCatalog[id])
		}
	}
	fileDocs, err := c.FileDocs(ctx, paths)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(handedPaths, fileDocs) {
		t.Errorf("handed paths %v, the catalog has %v", handedPaths, fileDocs)
	}
	if hits, misses := c.HandoffCounts(); hits != 2*int64(len(paths)) || misses != 0 {
		t.Errorf("counts: %d hits, %d misses; want %d, 0", hits, misses, 2*len(paths))
	}
}

// A document is handed only for the change that created it: a second path in the same
// transaction or a later one, a path on an archive drive, or a chunks key in the same page
// sends it to the catalog, whose rendering then has the change.
func TestHandoffLeavesChangedDocumentsToTheCatalog(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	update(t, c, func(ctx context.Context, tx *Tx) error {
		for _, d := range []struct{ id, path string }{{"dup", "a/one.txt"}, {"later", "b/one.txt"}, {"chunked", "c/one.txt"}, {"kept", "d/one.txt"}} {
			if err := newDoc(ctx, tx, d.id, d.path, 1); err != nil {
				return err
			}
		}
		// A copy of dup found in the same transaction.
		if err := tx.PutFiles(ctx, []File{{Path: "a/two.txt", DocID: "dup", Size: 12, Mtime: 2}}); err != nil {
			return err
		}
		return tx.Dirty(ctx, DocKey("dup"), PathKey("a/two.txt"))
	})
	update(t, c, func(ctx context.Context, tx *Tx) error {
		if err := tx.PutFiles(ctx, []File{{Path: "b/two.txt", DocID: "later", Size: 12, Mtime: 3}}); err != nil {
			return err
		}
		if err := tx.Dirty(ctx, DocKey("later"), PathKey("b/two.txt")); err != nil {
			return err
		}
		return tx.Dirty(ctx, ChunksKey("chunked", "text"))
	})
	// On an archive drive: never handed (its paths' availability is the drive's).
	update(t, c, func(ctx context.Context, tx *Tx) error {
		row := DocRow{ID: "archived", Type: "text/plain", Size: 1, Version: 1}
		f := File{Path: "archive/usb/x.txt", DocID: "archived", Drive: "usb", Mtime: 1}
		if err := tx.SetDrivePresent(ctx, "usb", true); err != nil {
			return err
		}
		if _, err := tx.InsertDocuments(ctx, []DocRow{row}); err != nil {
			return err
		}
		if err := tx.PutFiles(ctx, []File{f}); err != nil {
			return err
		}
		return tx.DirtyNew(ctx, row, f)
	})
	docs, paths := takeAll(t, c, 100)
	if _, ok := docs["kept"]; !ok || len(docs) != 1 {
		t.Errorf("handed documents %v, want kept's alone", slices.Sorted(maps.Keys(docs)))
	}
	want := map[string]string{"a/one.txt": "dup", "b/one.txt": "later", "c/one.txt": "chunked", "d/one.txt": "kept"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("handed paths %v, want %v", paths, want)
	}
	for id, n := range map[string]int{"dup": 2, "later": 2} {
		r, err := c.Documents(ctx, []string{id})
		if err != nil || r[id].Doc.Copies != n {
			t.Errorf("%s from the catalog: %+v, %v; want %d copies", id, r[id].Doc, err, n)
		}
	}
}

// An outbox seq is never given twice, even once the outbox has emptied: a handed document
// left from before could otherwise match a later change of the same key.
func TestOutboxSeqNeverRepeats(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	var seen []int64
	for range 3 {
		update(t, c, func(ctx context.Context, tx *Tx) error { return tx.Dirty(ctx, PathKey("p")) })
		es, err := c.PendingOutbox(ctx, 0, 10)
		if err != nil || len(es) != 1 {
			t.Fatalf("pending %+v, %v", es, err)
		}
		for _, s := range seen {
			if es[0].Seq <= s {
				t.Fatalf("seq %d given after %d", es[0].Seq, s)
			}
		}
		seen = append(seen, es[0].Seq)
		clearOutbox(t, c)
		if n, _, _ := c.OutboxLen(ctx); n != 0 {
			t.Fatalf("outbox holds %d keys after done", n)
		}
	}
}

// Past the cap, documents wait in the catalog alone; what was handed stays exact, and what
// was not is counted as missed.
func TestHandoffCapLeavesTheRestToTheCatalog(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	c.handoff.limit = 3
	update(t, c, func(ctx context.Context, tx *Tx) error {
		for i := range 5 {
			if err := newDoc(ctx, tx, fmt.Sprintf("id%d", i), fmt.Sprintf("p%d", i), 1); err != nil {
				return err
			}
		}
		return nil
	})
	docs, paths := takeAll(t, c, 4)
	if len(docs) != 3 || len(paths) != 3 {
		t.Fatalf("handed %d documents, %d paths; want 3 of each (the cap)", len(docs), len(paths))
	}
	if hits, misses := c.HandoffCounts(); hits != 6 || misses != 4 {
		t.Fatalf("counts: %d hits, %d misses; want 6, 4", hits, misses)
	}
	if c.handoff.waiting != 0 || len(c.handoff.batches) != 0 {
		t.Fatalf("%d documents still wait after every entry was taken", c.handoff.waiting)
	}
}
