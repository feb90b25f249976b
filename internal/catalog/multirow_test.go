package catalog

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// InsertDocuments and PutFiles write many rows to a statement with what one row at a time
// would leave: over several statements, a document is created by the first row of its id
// only (not by a later row, in the same statement or a later one, nor when it was stored
// before), and a later row of a path replaces an earlier one.
func TestManyRowsAreWrittenAsIfOneAtATime(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	addDoc(t, c, "stored", "")
	var rows []DocRow
	var files []File
	var want []bool
	for i := range 2*maxRowsPerStmt + 7 {
		id := fmt.Sprintf("d%02d", i%40) // d00… again from row 40: in the second statement
		first := i < 40
		if i == 33 {
			id, first = "stored", false
		}
		rows = append(rows, DocRow{ID: id, Type: "text/plain", Size: int64(i), Version: 1})
		want = append(want, first)
		files = append(files, File{Path: fmt.Sprintf("p%02d", i%50), DocID: id, Size: int64(i), Ino: uint64(i + 1)})
	}
	var created []bool
	update(t, c, func(ctx context.Context, tx *Tx) error {
		var err error
		if created, err = tx.InsertDocuments(ctx, rows); err != nil {
			return err
		}
		return tx.PutFiles(ctx, files)
	})
	if !slices.Equal(created, want) {
		t.Errorf("created %v\nwant    %v", created, want)
	}
	for i, f := range files {
		if i+50 < len(files) {
			f = files[i+50] // its path's later row
		}
		var got File
		err := c.r.QueryRow(`SELECT doc_id, size, ino FROM files WHERE path = ?`, f.Path).Scan(&got.DocID, &got.Size, &got.Ino)
		if err != nil {
			t.Fatalf("path %s: %v", f.Path, err)
		}
		if got.DocID != f.DocID || got.Size != f.Size || got.Ino != f.Ino {
			t.Errorf("path %s: doc %s, size %d, ino %d; want %s, %d, %d", f.Path, got.DocID, got.Size, got.Ino, f.DocID, f.Size, f.Ino)
		}
	}
	var size int64
	if err := c.r.QueryRow(`SELECT size FROM documents WHERE id = 'd05'`).Scan(&size); err != nil || size != 5 {
		t.Errorf("d05's size %d (%v), want 5: the first row's", size, err)
	}
}
