package catalog

import (
	"context"
	"testing"
)

// Candidates lists a module's waiting documents: tier A (a path on a present drive) before
// tier B, then by path; never documents with a job of the module, missing ones or ones whose
// every path is on an absent drive.
func TestCandidatesOrder(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "b1", "m", "z/b1.txt")
	addDoc(t, c, "a2", "m", "archive/usb/y.txt")
	addDoc(t, c, "b2", "m", "a/b2.txt")
	addDoc(t, c, "a1", "m", "archive/nas/x.txt", "0first.txt") // tier A, its drive path opens
	addDoc(t, c, "busy", "m", "busy.txt")
	addDoc(t, c, "done", "", "done.txt")
	addDoc(t, c, "other", "m2", "other.txt")
	addDoc(t, c, "missing", "m")
	addDoc(t, c, "offline", "m", "archive/gone/o.txt")
	putJob(t, c, "busy", "m", "t", JobQueued)
	update(t, c, func(ctx context.Context, tx *Tx) error {
		if err := tx.SetMissing(ctx, "missing", timeT0); err != nil {
			return err
		}
		if err := tx.SetDrivePresent(ctx, "gone", false); err != nil {
			return err
		}
		return tx.Dirty(ctx, DocKey("offline"))
	})
	got, err := c.Candidates(ctx, "m", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []Candidate{{"a1", 0, "archive/nas/x.txt"}, {"a2", 0, "archive/usb/y.txt"}, {"b2", 1, "a/b2.txt"}, {"b1", 1, "z/b1.txt"}}
	if len(got) != len(want) {
		t.Fatalf("Candidates = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Candidates = %+v, want %+v", got, want)
		}
	}
	if two, _ := c.Candidates(ctx, "m", 2); len(two) != 2 || two[1].ID != "a2" {
		t.Fatalf("Candidates limit 2 = %+v", two)
	}
	// The drive returns: its document is a candidate again, in tier A (archive/gone sorts first).
	update(t, c, func(ctx context.Context, tx *Tx) error {
		if err := tx.SetDrivePresent(ctx, "gone", true); err != nil {
			return err
		}
		return tx.Dirty(ctx, DocKey("offline"))
	})
	if got, _ := c.Candidates(ctx, "m", 10); len(got) != 5 || got[0].ID != "offline" || got[1].ID != "a1" {
		t.Fatalf("Candidates after the drive returned = %+v", got)
	}
}

// ItemDocuments renders documents for queue items with the dispatch path first in paths, and
// leaves out documents that are gone, missing or offline.
func TestItemDocuments(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "m", "0.txt", "archive/usb/x.txt", "b.txt")
	addDoc(t, c, "r", "m", "r.txt")
	addDoc(t, c, "off", "m", "archive/gone/o.txt")
	update(t, c, func(ctx context.Context, tx *Tx) error {
		if err := tx.DeleteFile(ctx, "r.txt"); err != nil {
			return err
		}
		if err := tx.SetMissing(ctx, "r", timeT0); err != nil {
			return err
		}
		if err := tx.SetDrivePresent(ctx, "gone", false); err != nil {
			return err
		}
		return tx.Dirty(ctx, DocKey("off"), DocKey("r"))
	})
	docs, err := c.ItemDocuments(ctx, []string{"a", "r", "off", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].ID != "a" {
		t.Fatalf("ItemDocuments = %+v, want a only", docs)
	}
	var order []string
	for _, p := range docs[0].Paths {
		order = append(order, p.Path)
	}
	if len(order) != 3 || order[0] != "archive/usb/x.txt" || order[1] != "0.txt" || order[2] != "b.txt" {
		t.Fatalf("paths %v, want the drive path first, the rest in order", order)
	}
}
