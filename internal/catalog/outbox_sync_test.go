package catalog

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// FileDocs finds each path's document by its exact bytes, in chunks, leaving out paths
// without a row; Files yields paths in byte order (the walk's order).
func TestFileDocsAndFilesOrder(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	odd := []string{"caf\xe9.txt", "a/b", "a-b", "a.b", "a0"}
	addDoc(t, c, "odd", "", odd...)
	var many []string
	for i := range 700 { // more than one chunk, and a short last one
		many = append(many, fmt.Sprintf("dir/f%04d", i))
	}
	addDoc(t, c, "many", "", many...)

	ask := append(slices.Clone(odd), "caf\ufffd.txt", "missing")
	ask = append(ask, many...)
	got, err := c.FileDocs(ctx, ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(odd)+len(many) {
		t.Errorf("FileDocs found %d paths, want %d", len(got), len(odd)+len(many))
	}
	for _, p := range odd {
		if got[p] != "odd" {
			t.Errorf("FileDocs[%q] = %q, want odd", p, got[p])
		}
	}
	for _, p := range many {
		if got[p] != "many" {
			t.Errorf("FileDocs[%q] = %q, want many", p, got[p])
		}
	}
	if id, ok := got["caf\ufffd.txt"]; ok {
		t.Errorf("the display form found %q", id)
	}

	var order []string
	if err := c.Files(ctx, func(f File) error { order = append(order, f.Path); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(order) || len(order) != len(odd)+len(many) {
		t.Errorf("Files: %d paths, sorted %v; want %d in byte order", len(order), slices.IsSorted(order), len(odd)+len(many))
	}
}

// OutboxDone deletes the rows it completes, keeps the others with their flags, and leaves a
// row alone whose seq moved on (a newer change must be applied again).
func TestOutboxDoneTouchesOnlyItsRows(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "d1", "", "one")
	addDoc(t, c, "d2", "", "two")
	addDoc(t, c, "d3", "", "three")
	if err := c.DirtyKeys(ctx, []string{DocKey("d1"), DocKey("d2"), DocKey("d3")}); err != nil {
		t.Fatal(err)
	}
	pending, err := c.PendingOutbox(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	bySeq := map[string]OutboxEntry{}
	for _, e := range pending {
		bySeq[e.Key] = e
	}
	done := bySeq[DocKey("d1")]
	done.MetaDone, done.IndexDone = true, true
	half := bySeq[DocKey("d2")]
	half.MetaDone = true
	stale := bySeq[DocKey("d3")]
	if err := c.DirtyKeys(ctx, []string{DocKey("d3")}); err != nil { // d3 changes again
		t.Fatal(err)
	}
	stale.MetaDone, stale.IndexDone = true, true
	if err := c.OutboxDone(ctx, []OutboxEntry{done, half, stale}); err != nil {
		t.Fatal(err)
	}
	after, err := c.PendingOutbox(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]OutboxEntry{}
	for _, e := range after {
		left[e.Key] = e
	}
	if _, ok := left[DocKey("d1")]; ok {
		t.Error("a fully applied row stayed")
	}
	if e, ok := left[DocKey("d2")]; !ok || !e.MetaDone || e.IndexDone {
		t.Errorf("half-applied row: got %+v (present %v), want meta done, index pending", e, ok)
	}
	if e, ok := left[DocKey("d3")]; !ok || e.MetaDone || e.IndexDone {
		t.Errorf("row re-dirtied since it was read: got %+v (present %v), want pending", e, ok)
	}
}
