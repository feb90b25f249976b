package catalog

import (
	"context"
	"slices"
	"testing"
)

// PutFile inserts or replaces a path row; a row without a stat is a legacy import.
func TestPutFileAndFiles(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "")
	addDoc(t, c, "b", "")
	want := File{Path: "x.txt", DocID: "a", Dev: 1<<63 + 5, Ino: 7, Size: 3, MtimeNs: 1_700_000_000_123_456_789, Mtime: 1700000000.1234}
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.PutFile(ctx, want) })
	got := map[string]File{}
	if err := c.Files(ctx, func(f File) error { got[f.Path] = f; return nil }); err != nil {
		t.Fatal(err)
	}
	if got["x.txt"] != want {
		t.Fatalf("row %+v, want %+v (device numbers use all 64 bits)", got["x.txt"], want)
	}
	if want.Legacy() || !(File{Path: "p", DocID: "a", Size: 1, Mtime: 1}).Legacy() {
		t.Fatal("Legacy() wrong")
	}
	moved := want
	moved.DocID, moved.Size = "b", 4
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.PutFile(ctx, moved) })
	if id, ok, _ := c.FileDoc(ctx, "x.txt"); !ok || id != "b" {
		t.Fatalf("FileDoc after replace = %q %v", id, ok)
	}
	if n, _ := c.CountFiles(ctx); n != 1 {
		t.Fatalf("CountFiles = %d, want 1", n)
	}
	update(t, c, func(ctx context.Context, tx *Tx) error {
		if err := tx.DeleteFile(ctx, "x.txt"); err != nil {
			return err
		}
		return tx.DeleteFile(ctx, "never.txt") // missing is fine
	})
	if _, ok, _ := c.FileDoc(ctx, "x.txt"); ok {
		t.Fatal("deleted row still found")
	}
}

// A path row belongs to an existing document (foreign key).
func TestPutFileNeedsItsDocument(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	err := c.Update(ctx, func(tx *Tx) error { return tx.PutFile(ctx, File{Path: "orphan.txt", DocID: "nope"}) })
	if err == nil {
		t.Fatal("a path of no document was recorded")
	}
}

// Within a transaction: path counts, the document of a path, a drive's documents and paths,
// and a re-derived drive.
func TestFileQueriesInATransaction(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "", "archive/usb/a1.txt", "archive/usb/a2.txt", "a3.txt")
	addDoc(t, c, "b", "", "archive/usb/b.txt")
	addDoc(t, c, "c", "", "archive/other/c.txt")
	update(t, c, func(ctx context.Context, tx *Tx) error {
		if n, err := tx.DocPathCount(ctx, "a"); err != nil || n != 3 {
			t.Errorf("DocPathCount(a) = %d, %v", n, err)
		}
		if n, err := tx.DocPathCount(ctx, "none"); err != nil || n != 0 {
			t.Errorf("DocPathCount(none) = %d, %v", n, err)
		}
		if id, ok, err := tx.FileDoc(ctx, "a3.txt"); err != nil || !ok || id != "a" {
			t.Errorf("FileDoc = %q %v %v", id, ok, err)
		}
		if _, ok, err := tx.FileDoc(ctx, "none.txt"); err != nil || ok {
			t.Errorf("FileDoc of no path = %v %v", ok, err)
		}
		var ids []string
		if err := tx.DriveDocIDs(ctx, "usb", func(id string) error { ids = append(ids, id); return nil }); err != nil {
			return err
		}
		slices.Sort(ids)
		if !slices.Equal(ids, []string{"a", "b"}) {
			t.Errorf("DriveDocIDs(usb) = %v", ids)
		}
		fs, err := tx.DrivePaths(ctx, "usb")
		if err != nil {
			return err
		}
		var paths []string
		for _, f := range fs {
			paths = append(paths, f.Path)
			if f.Drive != "usb" || f.DocID == "" {
				t.Errorf("DrivePaths row %+v", f)
			}
		}
		if !slices.Equal(paths, []string{"archive/usb/a1.txt", "archive/usb/a2.txt", "archive/usb/b.txt"}) {
			t.Errorf("DrivePaths(usb) = %v", paths)
		}
		return tx.SetFileDrive(ctx, "archive/other/c.txt", "")
	})
	if refs, _ := c.ReferencedDrives(ctx); !slices.Equal(refs, []string{"usb"}) {
		t.Fatalf("ReferencedDrives after clearing other's only path = %v", refs)
	}
}
