package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openTest(t *testing.T) *Catalog {
	t.Helper()
	c, err := Open(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// addDoc inserts a live document with next and its paths (drive derived from "archive/<d>/").
func addDoc(t *testing.T, c *Catalog, id, next string, paths ...string) {
	t.Helper()
	ctx := context.Background()
	err := c.Update(ctx, func(tx *Tx) error {
		if _, err := tx.InsertDocument(ctx, DocRow{ID: id, Type: "text/plain", Size: 1, Next: next, Version: 1}); err != nil {
			return err
		}
		for _, p := range paths {
			drive := ""
			var d string
			if n, _ := fmt.Sscanf(p, "archive/%s", &d); n == 1 {
				drive = d[:len(d)-len(filepath.Base(p))-1]
				if err := tx.SetDrivePresent(ctx, drive, true); err != nil {
					return err
				}
			}
			if err := tx.PutFile(ctx, File{Path: p, DocID: id, Dev: 1, Ino: 1, Size: 1, MtimeNs: 1, Mtime: 1, Drive: drive}); err != nil {
				return err
			}
		}
		return tx.Dirty(ctx, DocKey(id))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func next(t *testing.T, c *Catalog, id string) string {
	t.Helper()
	d, _, err := c.Document(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return d.Next
}

// RequeueUnder moves back to a module only the documents under the prefix (on path-component
// boundaries) that reached it, drops their parked job of that module, and leaves documents that
// have not reached it yet.
func TestRequeueUnder(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	pipeline := []string{"a", "b", "c"}
	addDoc(t, c, "d1", "", "photos/x.jpg")           // done: back to b
	addDoc(t, c, "d2", "c", "photos/sub/y.jpg")      // past b: back to b
	addDoc(t, c, "d3", "a", "photos/z.jpg")          // not at b yet: left alone
	addDoc(t, c, "d4", "", "photos2/w.jpg")          // outside the prefix (photos2 is not photos/)
	addDoc(t, c, "d5", "", "archive/usb/photos.jpg") // outside
	addDoc(t, c, "d6", "c", "photos/parked.jpg")     // parked in b, moved on: back to b, row dropped
	if err := c.Update(ctx, func(tx *Tx) error {
		return tx.PutJob(ctx, Job{DocID: "d6", Module: "b", Token: "t", Attempt: 5, State: JobParked, Since: time.Now(), Updated: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	n, err := c.RequeueUnder(ctx, "b", pipeline, "photos")
	if err != nil || n != 3 {
		t.Fatalf("RequeueUnder = %d, %v; want 3", n, err)
	}
	for id, want := range map[string]string{"d1": "b", "d2": "b", "d3": "a", "d4": "", "d5": "", "d6": "b"} {
		if got := next(t, c, id); got != want {
			t.Errorf("%s: next %q, want %q", id, got, want)
		}
	}
	if _, ok, _ := c.Job(ctx, "d6", "b"); ok {
		t.Error("d6's parked job of b is still there: the dispatcher would never take it")
	}
	cands, err := c.Candidates(ctx, "b", 10)
	if err != nil || len(cands) != 3 {
		t.Fatalf("candidates of b = %v (%v), want d1, d2, d6", cands, err)
	}
	if n, err := c.RequeueUnder(ctx, "a", pipeline, ""); err != nil || n != 6 {
		t.Fatalf("RequeueUnder everything = %d, %v; want 6", n, err)
	}
	if _, err := c.RequeueUnder(ctx, "zz", pipeline, ""); err == nil {
		t.Fatal("RequeueUnder of an unknown module succeeded")
	}
}

// DriveCounts sorts each path on a drive into pending, failed or done; ModuleCounts places
// documents relative to each module; DropParked counts what the bound dropped.
func TestDriveAndModuleCounts(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	pipeline := []string{"a", "b"}
	addDoc(t, c, "p1", "a", "archive/usb/1.txt")
	addDoc(t, c, "p2", "b", "archive/usb/2.txt", "docs/2.txt")
	addDoc(t, c, "d1", "", "archive/usb/3.txt")
	addDoc(t, c, "f1", "b", "archive/usb/4.txt")
	// f1 was parked in a and moved on to b.
	if err := c.Update(ctx, func(tx *Tx) error {
		return tx.PutJob(ctx, Job{DocID: "f1", Module: "a", Token: "tf", Attempt: 3, State: JobParked, Reason: "boom", Since: time.Now(), Updated: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Park(ctx, "f1", "a", "tf", 3, "boom", pipeline, time.Now()); err != nil {
		t.Fatal(err)
	}
	dc, err := c.DriveCounts(ctx)
	if err != nil || len(dc) != 1 {
		t.Fatalf("DriveCounts = %+v (%v), want one drive", dc, err)
	}
	// f1 has next b (pending) and a failure: pending wins while work is due.
	if got := dc[0]; got.Name != "usb" || !got.Present || got.Files != 4 || got.Pending != 3 || got.Done != 1 || got.Failed != 0 {
		t.Fatalf("usb = %+v, want 4 files: 3 pending, 1 done", got)
	}
	live, _, err := c.CountDocuments(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := c.ModuleCounts(ctx, pipeline, live)
	if err != nil {
		t.Fatal(err)
	}
	if a := mc["a"]; a.Waiting != 1 || a.Parked != 1 || a.Done != 2 {
		t.Fatalf("a = %+v, want 1 waiting, 1 parked, 2 done (p2 and d1)", a)
	}
	if b := mc["b"]; b.Waiting != 2 || b.Done != 1 {
		t.Fatalf("b = %+v, want 2 waiting (p2, f1), 1 done (d1)", b)
	}
	parked, err := c.ParkedJobs(ctx, "", 0)
	if err != nil || len(parked) != 1 || parked[0].Path != "archive/usb/4.txt" || parked[0].Reason != "boom" {
		t.Fatalf("ParkedJobs = %+v (%v)", parked, err)
	}
	if n, err := c.DropParked(ctx, "a", map[string]string{"f1": "not-its-token"}, true); err != nil || n != 0 {
		t.Fatalf("DropParked with a stale token = %d, %v; want 0", n, err)
	}
	if n, err := c.DropParked(ctx, "a", map[string]string{"f1": "tf"}, true); err != nil || n != 1 {
		t.Fatalf("DropParked = %d, %v; want 1", n, err)
	}
	if n, err := c.MetaInt(ctx, MetaParkedDroppedPrefix+"a"); err != nil || n != 1 {
		t.Fatalf("dropped counter = %d, %v; want 1", n, err)
	}
}

func TestCleanRelPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want, err string }{
		{"", "", ""},
		{".", "", ""},
		{"photos/", "photos", ""},
		{"./photos//2020/", "photos/2020", ""},
		{"/files/photos", "photos", ""},
		{"/files", "", ""},
		{"/elsewhere/x", "", "not under"},
		{"/filesx/y", "", "not under"},
		{"a/../../etc", "", "must not contain .."},
	} {
		got, err := CleanRelPath("/files", tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("CleanRelPath(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CleanRelPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// ResolveDocument finds a live document by id or by path.
func TestResolveDocument(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "abc", "", "photos/a.jpg")
	addDoc(t, c, "gone", "")
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetMissing(ctx, "gone", timeT0) })
	for in, want := range map[string]string{"abc": "abc", "photos/a.jpg": "abc"} {
		if got, err := c.ResolveDocument(ctx, in); err != nil || got != want {
			t.Errorf("ResolveDocument(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"gone", "photos/none.jpg"} {
		if _, err := c.ResolveDocument(ctx, in); !errors.Is(err, ErrNoSuchDocument) {
			t.Errorf("ResolveDocument(%q) = %v, want ErrNoSuchDocument", in, err)
		}
	}
}

// OldestParked lists a module's parked jobs oldest first; ModuleParked counts them per module.
func TestOldestParkedAndModuleParked(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	for i, id := range []string{"new", "old", "mid"} {
		at := timeT0.Add(time.Duration([]int{3, 1, 2}[i]) * time.Minute)
		update(t, c, func(ctx context.Context, tx *Tx) error {
			return tx.PutJob(ctx, Job{DocID: id, Module: "m", Token: "t" + id, Attempt: 3, State: JobParked, Since: at, Updated: at})
		})
	}
	putJob(t, c, "q", "m", "tq", JobQueued)
	putJob(t, c, "o", "other", "to", JobParked)
	jobs, err := c.OldestParked(ctx, "m", 2)
	if err != nil || len(jobs) != 2 || jobs[0].DocID != "old" || jobs[1].DocID != "mid" {
		t.Fatalf("OldestParked = %+v, %v", jobs, err)
	}
	if got, err := c.ModuleParked(ctx); err != nil || got["m"] != 3 || got["other"] != 1 {
		t.Fatalf("ModuleParked = %v, %v", got, err)
	}
}
