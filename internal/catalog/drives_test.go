package catalog

import (
	"context"
	"maps"
	"testing"
)

// Drive presence is recorded, updated and forgotten.
func TestDrivePresence(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	update(t, c, func(ctx context.Context, tx *Tx) error {
		if err := tx.SetDrivePresent(ctx, "usb", true); err != nil {
			return err
		}
		return tx.SetDrivePresent(ctx, "nas", true)
	})
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetDrivePresent(ctx, "nas", false) })
	got, err := c.Drives(ctx)
	if err != nil || !maps.Equal(got, map[string]bool{"usb": true, "nas": false}) {
		t.Fatalf("Drives = %v, %v", got, err)
	}
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.DeleteDrive(ctx, "nas") })
	if got, _ := c.Drives(ctx); !maps.Equal(got, map[string]bool{"usb": true}) {
		t.Fatalf("Drives after delete = %v", got)
	}
}

// A drive's status: referenced while some path is on it, pending while a document with a path
// on it has a module due.
func TestDriveStatus(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "done", "", "archive/usb/done.txt")
	addDoc(t, c, "due", "m1", "archive/nas/due.txt", "elsewhere.txt")
	for _, want := range []DriveStatus{
		{Name: "usb", Referenced: true},
		{Name: "nas", Referenced: true, Pending: true},
		{Name: "empty"},
	} {
		got, err := c.DriveStatus(ctx, want.Name)
		if err != nil || got != want {
			t.Errorf("DriveStatus(%s) = %+v, %v; want %+v", want.Name, got, err, want)
		}
	}
	if _, err := c.MoveNext(ctx, "m1", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.DriveStatus(ctx, "nas"); got.Pending {
		t.Fatal("nas still pending with nothing due")
	}
}
