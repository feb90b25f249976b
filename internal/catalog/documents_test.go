package catalog

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/homeindex/homeindex/protocol"
)

// InsertDocument creates a row once; a second insert of the same id changes nothing.
func TestInsertDocumentIsIdempotent(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	var first, second bool
	update(t, c, func(ctx context.Context, tx *Tx) error {
		var err error
		first, err = tx.InsertDocument(ctx, DocRow{ID: "a", Type: "text/plain", Size: 3, Next: "m1", Version: 2,
			Fields: map[string]json.RawMessage{"caption": json.RawMessage(`"a cat"`)}})
		if err != nil {
			return err
		}
		second, err = tx.InsertDocument(ctx, DocRow{ID: "a", Type: "image/png", Size: 9, Next: "m2", Version: 2})
		return err
	})
	if !first || second {
		t.Fatalf("inserted %v then %v, want true then false", first, second)
	}
	d, st, err := c.Document(context.Background(), "a")
	if err != nil || st != DocLive {
		t.Fatalf("state %v, %v", st, err)
	}
	if d.Type != "text/plain" || d.Size != 3 || d.Next != "m1" || string(d.Fields["caption"]) != `"a cat"` {
		t.Fatalf("document %+v: the second insert changed it", d)
	}
}

// A document is live, then retired (missing), then live again; deleted it is gone.
func TestDocumentStates(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "")
	state := func() DocState {
		var s DocState
		update(t, c, func(ctx context.Context, tx *Tx) error {
			var err error
			s, err = tx.DocumentState(ctx, "a")
			return err
		})
		return s
	}
	if s := state(); s != DocLive {
		t.Fatalf("state %v, want live", s)
	}
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetRetired(ctx, "a", true) })
	if s := state(); s != DocRetired {
		t.Fatalf("state %v, want retired", s)
	}
	if live, retired, _ := c.CountDocuments(ctx); live != 0 || retired != 1 {
		t.Fatalf("counts %d live %d retired", live, retired)
	}
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetRetired(ctx, "a", false) })
	if s := state(); s != DocLive {
		t.Fatalf("state %v, want live again", s)
	}
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.DeleteDocument(ctx, "a") })
	if s := state(); s != DocMissing {
		t.Fatalf("state %v, want gone", s)
	}
}

// A document renders its stored fields with everything derived from its paths: paths and
// paths_list in path order, copies, the latest mtime, has_archive_paths, and offline when
// every path is on an absent drive.
func TestDocumentRendering(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	update(t, c, func(ctx context.Context, tx *Tx) error {
		if _, err := tx.InsertDocument(ctx, DocRow{ID: "a", Type: "image/jpeg", Size: 10, Next: "m2", Version: 2,
			Fields: map[string]json.RawMessage{"width": json.RawMessage(`640`)}}); err != nil {
			return err
		}
		if err := tx.SetDrivePresent(ctx, "usb", false); err != nil {
			return err
		}
		for _, f := range []File{
			{Path: "z/late.jpg", DocID: "a", Ino: 1, Mtime: 300.5},
			{Path: "archive/usb/a.jpg", DocID: "a", Ino: 2, Mtime: 100, Drive: "usb"},
			{Path: "b.jpg", DocID: "a", Ino: 3, Mtime: 200},
		} {
			if err := tx.PutFile(ctx, f); err != nil {
				return err
			}
		}
		return nil
	})
	d, _, err := c.Document(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	want := protocol.Document{ID: "a", Type: "image/jpeg", Size: 10, Next: "m2", Version: 2,
		Paths:     protocol.Paths{{Path: "archive/usb/a.jpg", Mtime: 100}, {Path: "b.jpg", Mtime: 200}, {Path: "z/late.jpg", Mtime: 300.5}},
		PathsList: []string{"archive/usb/a.jpg", "b.jpg", "z/late.jpg"}, Copies: 3, Mtime: 300.5, HasArchivePaths: true,
		Fields: map[string]json.RawMessage{"width": json.RawMessage(`640`)}}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("rendered:\n got %+v\nwant %+v", d, want)
	}
	// Only the absent drive's path left: offline.
	update(t, c, func(ctx context.Context, tx *Tx) error {
		if err := tx.DeleteFile(ctx, "b.jpg"); err != nil {
			return err
		}
		return tx.DeleteFile(ctx, "z/late.jpg")
	})
	if d, _, _ := c.Document(ctx, "a"); !d.Offline || d.Copies != 1 || d.Mtime != 100 {
		t.Fatalf("offline rendering: %+v", d)
	}
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetDrivePresent(ctx, "usb", true) })
	if d, _, _ := c.Document(ctx, "a"); d.Offline {
		t.Fatal("offline with its drive present")
	}
}

// Documents renders several at once; ids not in the catalog are left out, retired ones say so.
func TestDocumentsRendersABatch(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "", "a.txt")
	addDoc(t, c, "b", "", "b.txt", "b2.txt")
	addDoc(t, c, "r", "")
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetMissing(ctx, "r", timeT0) })
	got, err := c.Documents(ctx, []string{"a", "b", "r", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["a"].State != DocLive || got["b"].Doc.Copies != 2 || got["r"].State != DocRetired {
		t.Fatalf("Documents = %+v", got)
	}
	if _, ok := got["nope"]; ok {
		t.Fatal("an unknown id rendered")
	}
	if got, err := c.Documents(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("Documents(nil) = %v, %v", got, err)
	}
	var ids []string
	if err := c.DocumentIDs(ctx, func(id string, retired bool) error {
		if retired != (id == "r") {
			t.Errorf("%s retired %v", id, retired)
		}
		ids = append(ids, id)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"a", "b", "r"}) {
		t.Fatalf("DocumentIDs %v", ids)
	}
}
