package filesync_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/filesync"
)

// An emptied files root (an unmounted share) deletes nothing: every path is held, the report
// names the root, and the files coming back are known documents again.
func TestEmptiedRootDeletesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.write("a/one.txt", "one")
	c := b.write("b/two.txt", "two")
	b.sync()
	b.takeOutbox()
	b.remove("a")
	b.remove("b")
	st := b.sync()
	if st.Held != 2 || st.Deleted != 0 || st.MissingDocs != 0 {
		t.Fatalf("stats: %+v", st)
	}
	for _, id := range []string{a, c} {
		if b.state(id) != catalog.DocLive {
			t.Fatalf("%s: state %v, want live", id, b.state(id))
		}
	}
	if keys := b.takeOutbox(); len(keys) != 0 {
		t.Fatalf("a held sync dirtied %v", keys)
	}
	want := filesync.HeldDir{Dir: "", Reason: filesync.HeldEmpty, Files: 2}
	r := b.report()
	if len(r.HeldDirs) != 1 || r.HeldDirs[0] != want || r.HeldTotal != 1 || r.HeldFiles != 2 || r.HeldUnreadable != 0 || r.Hold != nil {
		t.Fatalf("report: %+v", r)
	}
	if live := b.s.Report(); live == nil || len(live.HeldDirs) != 1 {
		t.Fatalf("Syncer.Report() = %+v, want the same report", live)
	}
	b.write("a/one.txt", "one")
	b.write("b/two.txt", "two")
	if st := b.sync(); st.NewDocs != 0 || st.Held != 0 || st.Added != 0 {
		t.Fatalf("after return: %+v", st)
	}
	if r := b.report(); len(r.HeldDirs) != 0 || r.HeldTotal != 0 {
		t.Fatalf("still held: %+v", r)
	}
}

// An emptied subdirectory (a mount point left empty) holds the paths below it only.
func TestEmptiedSubdirectoryDeletesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write("top.txt", "top")
	a := b.write("nas/photos/one.jpg", "photo one")
	c := b.write("nas/two.txt", "two")
	gone := b.write("elsewhere/three.txt", "three")
	b.write("elsewhere/stays.txt", "stays")
	b.sync()
	b.remove("nas")
	b.mkdir("nas")
	b.remove("elsewhere/three.txt")
	st := b.sync()
	if st.Held != 2 || st.MissingDocs != 1 || st.Deleted != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if b.state(a) != catalog.DocLive || b.state(c) != catalog.DocLive || b.state(gone) != catalog.DocRetired {
		t.Fatalf("states: %v %v %v", b.state(a), b.state(c), b.state(gone))
	}
	if r := b.report(); len(r.HeldDirs) != 1 || r.HeldDirs[0].Dir != "nas" || r.HeldDirs[0].Files != 2 {
		t.Fatalf("report: %+v", r)
	}
}

// A files root that cannot be opened at all holds every path, as unreadable.
func TestVanishedRootDeletesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.write("a.txt", "a")
	b.sync()
	b.remove("")
	st := b.sync()
	if st.Held != 1 || st.Deleted != 0 || b.state(a) != catalog.DocLive {
		t.Fatalf("stats: %+v, state %v", st, b.state(a))
	}
	r := b.report()
	if len(r.HeldDirs) != 1 || r.HeldDirs[0].Reason != filesync.HeldUnreadable || r.HeldDirs[0].Error == "" || r.HeldUnreadable != 1 {
		t.Fatalf("report: %+v", r)
	}
}

// The operator's confirmation releases the paths of emptied directories: the next sync makes
// them missing, and the confirmation is used up.
func TestConfirmationReleasesEmptiedDirectories(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write("top.txt", "top")
	a := b.write("nas/one.txt", "one")
	b.sync()
	b.remove("nas")
	b.mkdir("nas")
	if st := b.sync(); st.Held != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if err := b.cat.ConfirmMissing(b.ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	st := b.sync()
	if st.Held != 0 || st.MissingDocs != 1 || b.state(a) != catalog.DocRetired {
		t.Fatalf("confirmed sync: %+v, state %v", st, b.state(a))
	}
	if _, ok, _ := b.cat.Meta(b.ctx, catalog.MetaMissingConfirm); ok {
		t.Fatal("confirmation not used up")
	}
}

// A deleted file's document goes missing: out of the live set with a missing-since time, its
// row kept for the purge after the retention.
func TestDeletedFileGoesMissing(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := setup(t, func(c *filesync.Config) { c.Now = func() time.Time { return now } })
	b.writeAged("keep.txt", "keep")
	id := b.writeAged("gone.txt", "gone")
	b.sync()
	b.remove("gone.txt")
	if st := b.sync(); st.MissingDocs != 1 || st.Deleted != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if n, _ := b.cat.CountMissing(b.ctx); n != 1 {
		t.Fatalf("missing %d, want 1", n)
	}
	var since time.Time
	if err := b.cat.MissingSince(b.ctx, func(got string, at time.Time, paths int) error {
		if got == id {
			since = at
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !since.Equal(now) {
		t.Fatalf("missing since %v, want %v", since, now)
	}
	if ids, err := b.cat.PurgeMissing(b.ctx, now.Add(time.Hour), 10); err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("purge: %v %v", ids, err)
	}
	if s := b.state(id); s != catalog.DocMissing {
		t.Fatalf("state after purge %v", s)
	}
}

// Content that disappears from one place and shows up at another comes back as the same
// document, live again, with its chain state; nothing is new.
func TestMovedContentComesBack(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *filesync.Config) { c.FirstModule = func() string { return "m1" } })
	b.write("keep.txt", "keep")
	id := b.write("old/name.txt", "moving content")
	b.sync()
	b.remove("old")
	if st := b.sync(); st.MissingDocs != 1 {
		t.Fatalf("stats: %+v", st)
	}
	b.write("new/place/renamed.txt", "moving content")
	st := b.sync()
	if st.NewDocs != 0 || st.ReturnedDocs != 1 {
		t.Fatalf("stats %+v", st)
	}
	if d := b.live(id); len(d.PathsList) != 1 || d.PathsList[0] != "new/place/renamed.txt" || d.Next != "m1" {
		t.Fatalf("document: %+v", d)
	}
	if n, _ := b.cat.CountMissing(b.ctx); n != 0 {
		t.Fatalf("missing %d, want 0", n)
	}
}

// A sync that would make more than HoldShare of the live documents (and at least HoldMin)
// missing at once holds every such removal until the operator confirms; the hold keeps its
// start time across syncs; a small removal is not held.
func TestMassRemovalIsHeldUntilConfirmed(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *filesync.Config) { c.HoldMin, c.HoldShare = 3, 0.2 })
	var ids []string
	for i := range 10 {
		ids = append(ids, b.write(filepath.Join("d", string(rune('a'+i))+".txt"), "content "+string(rune('a'+i))))
	}
	b.sync()
	b.takeOutbox()
	for i := range 5 {
		b.remove(filepath.Join("d", string(rune('a'+i))+".txt"))
	}
	st := b.sync()
	if st.HeldRemovals != 5 || st.MissingDocs != 0 || st.Deleted != 0 {
		t.Fatalf("stats: %+v", st)
	}
	if keys := b.takeOutbox(); len(keys) != 0 {
		t.Fatalf("a held removal dirtied %v", keys)
	}
	h := b.report().Hold
	if h == nil || h.Documents != 5 || h.Paths != 5 || h.Live != 10 {
		t.Fatalf("hold: %+v", h)
	}
	since := h.Since
	if st := b.sync(); st.HeldRemovals != 5 {
		t.Fatalf("second sync: %+v", st)
	}
	if h := b.report().Hold; h == nil || !h.Since.Equal(since) {
		t.Fatalf("hold since changed: %+v", h)
	}
	for _, id := range ids {
		if b.state(id) != catalog.DocLive {
			t.Fatalf("%s went missing while held", id)
		}
	}
	if err := b.cat.ConfirmMissing(b.ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	st = b.sync()
	if st.MissingDocs != 5 || st.HeldRemovals != 0 {
		t.Fatalf("confirmed sync: %+v", st)
	}
	if r := b.report(); r.Hold != nil {
		t.Fatalf("hold after confirmation: %+v", r.Hold)
	}
	if _, ok, _ := b.cat.Meta(b.ctx, catalog.MetaMissingConfirm); ok {
		t.Fatal("confirmation not used up")
	}
	b.remove("d/f.txt")
	if st := b.sync(); st.MissingDocs != 1 || st.HeldRemovals != 0 {
		t.Fatalf("small removal: %+v", st)
	}
}

// A removal of several paths of one document that keeps another path counts no document, so
// it is never held.
func TestHoldCountsDocumentsNotPaths(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *filesync.Config) { c.HoldMin, c.HoldShare = 2, 0.1 })
	for i := range 5 {
		b.write(filepath.Join("copies", string(rune('a'+i))+".txt"), "one content")
	}
	id := b.write("last.txt", "one content")
	b.write("other.txt", "other")
	b.sync()
	b.remove("copies")
	st := b.sync()
	if st.HeldRemovals != 0 || st.Deleted != 5 || st.MissingDocs != 0 {
		t.Fatalf("stats: %+v", st)
	}
	if d := b.live(id); d.Copies != 1 {
		t.Fatalf("document: %+v", d)
	}
}
