package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/testutil/sqlplan"
)

// Dirty queues keys; doc: and chunks: keys have an index part, path: and drive: keys only a
// metadata part. Entries come back in seq order, paged after a seq.
func TestDirtyAndPendingOutbox(t *testing.T) {
	t.Parallel()
	c, ctx := openWithDocA(t)
	keys := []string{DocKey("a"), PathKey("x/y.txt"), DriveKey("usb"), ChunksKey("a", "m1")}
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.Dirty(ctx, keys...) })
	es, err := c.PendingOutbox(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, e := range es {
		got = append(got, e.Key)
		if i > 0 && e.Seq <= es[i-1].Seq {
			t.Errorf("seq not increasing: %+v", es)
		}
		wantIndexDone := e.Key == PathKey("x/y.txt") || e.Key == DriveKey("usb")
		if e.MetaDone || e.IndexDone != wantIndexDone {
			t.Errorf("%s: meta done %v index done %v", e.Key, e.MetaDone, e.IndexDone)
		}
	}
	if !slices.Equal(got, keys) {
		t.Fatalf("pending %v, want %v in order", got, keys)
	}
	page, err := c.PendingOutbox(ctx, es[1].Seq, 1)
	if err != nil || len(page) != 1 || page[0].Key != keys[2] {
		t.Fatalf("page after seq %d = %+v, %v", es[1].Seq, page, err)
	}
	if total, index, _ := c.OutboxLen(ctx); total != 4 || index != 2 {
		t.Fatalf("OutboxLen = %d, %d; want 4, 2", total, index)
	}
	if got, want := ChunksKey("a", "m1"), KeyChunks+"a/m1"; got != want {
		t.Fatalf("ChunksKey = %q", got)
	}
}

// OutboxDone clears fully applied entries, keeps a partly applied one with its done part, and
// leaves an entry dirtied again meanwhile (new seq) pending as new: a change made while its
// older version was being applied is never lost.
func TestOutboxDoneRespectsNewerChanges(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "")
	addDoc(t, c, "b", "")
	addDoc(t, c, "n", "")
	es, err := c.PendingOutbox(ctx, 0, 100)
	if err != nil || len(es) != 3 {
		t.Fatalf("pending %+v, %v", es, err)
	}
	// While the applier works on these, "n" changes again.
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.Dirty(ctx, DocKey("n")) })
	for i := range es {
		switch es[i].Key {
		case DocKey("a"), DocKey("n"):
			es[i].MetaDone, es[i].IndexDone = true, true
		case DocKey("b"):
			es[i].MetaDone = true // the index part failed
		}
	}
	if err := c.OutboxDone(ctx, es); err != nil {
		t.Fatal(err)
	}
	left := pending(t, c)
	if _, ok := left[DocKey("a")]; ok || len(left) != 2 {
		t.Fatalf("left %+v, want b and n", left)
	}
	if b := left[DocKey("b")]; !b.MetaDone || b.IndexDone {
		t.Fatalf("b = %+v, want its metadata part done, index pending", b)
	}
	if n := left[DocKey("n")]; n.MetaDone || n.IndexDone {
		t.Fatalf("n = %+v, want the newer change pending whole", n)
	}
	// Dirtying again resets the done parts.
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.Dirty(ctx, DocKey("b")) })
	if b := pending(t, c)[DocKey("b")]; b.MetaDone {
		t.Fatalf("re-dirtied b = %+v", b)
	}
}

// DirtyAllDocs queues every document, live or missing; DirtyKeys queues any number of keys.
func TestDirtyAllDocsAndKeys(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "", "a.txt")
	addDoc(t, c, "r", "")
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetMissing(ctx, "r", timeT0) })
	clearOutbox(t, c)
	if err := c.DirtyAllDocs(ctx); err != nil {
		t.Fatal(err)
	}
	if got := pendingKeys(t, c); !slices.Equal(got, []string{DocKey("a"), DocKey("r")}) {
		t.Fatalf("pending %v", got)
	}
	clearOutbox(t, c)
	keys := make([]string, 12000)
	for i := range keys {
		keys[i] = PathKey(string(rune('a'+i%26)) + "/" + string(rune(0x100+i)))
	}
	if err := c.DirtyKeys(ctx, keys); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := c.OutboxLen(ctx); n != 12000 {
		t.Fatalf("OutboxLen = %d, want 12000", n)
	}
}

// IndexSettled counts live documents with no index write pending, and pending index writes;
// IndexPendingDocs names the documents with one.
func TestIndexSettled(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "", "a.txt")
	addDoc(t, c, "b", "", "b.txt")
	addDoc(t, c, "r", "")
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetMissing(ctx, "r", timeT0) })
	clearOutbox(t, c)
	if s, p, err := c.IndexSettled(ctx); err != nil || s != 2 || p != 0 {
		t.Fatalf("settled %d pending %d, %v; want 2, 0", s, p, err)
	}
	update(t, c, func(ctx context.Context, tx *Tx) error {
		return tx.Dirty(ctx, DocKey("b"), DocKey("r"), PathKey("a.txt"), ChunksKey("a", "m1"))
	})
	if s, p, err := c.IndexSettled(ctx); err != nil || s != 1 || p != 2 {
		t.Fatalf("settled %d pending %d, %v; want 1 (a), 2 (b, r)", s, p, err)
	}
	var ids []string
	if err := c.IndexPendingDocs(ctx, func(id string) error { ids = append(ids, id); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"b", "r"}) {
		t.Fatalf("IndexPendingDocs = %v", ids)
	}
}

// A transaction's dirtied keys are written at its commit, many to a statement: more keys than
// one statement takes all arrive, in the order they were dirtied, and a key dirtied twice in
// the same transaction keeps its later seq and its reset done flags. A transaction that fails
// leaves none of its keys.
func TestDirtyWritesEveryKeyAtCommit(t *testing.T) {
	t.Parallel()
	c, ctx := openWithDocA(t)
	var keys []string
	for i := range 2*maxRowsPerStmt + 5 {
		keys = append(keys, PathKey(fmt.Sprintf("d/%03d", i)))
	}
	update(t, c, func(ctx context.Context, tx *Tx) error {
		if err := tx.Dirty(ctx, keys...); err != nil {
			return err
		}
		return tx.Dirty(ctx, DocKey("a"), keys[3])
	})
	es, err := c.PendingOutbox(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Delete(slices.Clone(keys), 3, 4), DocKey("a"), keys[3])
	var got []string
	for _, e := range es {
		got = append(got, e.Key)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pending %d keys %v\nwant %d in order %v", len(got), got, len(want), want)
	}

	boom := errors.New("boom")
	err = c.Update(ctx, func(tx *Tx) error {
		if err := tx.Dirty(ctx, PathKey("lost")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want boom", err)
	}
	if _, ok := pending(t, c)[PathKey("lost")]; ok {
		t.Fatal("a failed transaction's key is pending")
	}
}

// OutboxDone deletes a run of applied entries by their seq range: a key of the run dirtied
// again meanwhile (its seq now above the range) stays pending, whole. Entries out of seq order
// are refused, and nothing is done.
func TestOutboxDoneRangeKeepsRedirtiedKey(t *testing.T) {
	t.Parallel()
	c, ctx := openWithDocA(t)
	keys := []string{DocKey("a"), PathKey("p1"), PathKey("p2"), PathKey("p3")}
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.Dirty(ctx, keys...) })
	es, err := c.PendingOutbox(ctx, 0, 100)
	if err != nil || len(es) != len(keys) {
		t.Fatalf("pending %+v, %v", es, err)
	}
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.Dirty(ctx, PathKey("p2")) })
	for i := range es {
		es[i].MetaDone, es[i].IndexDone = true, true
	}
	if err := c.OutboxDone(ctx, []OutboxEntry{es[1], es[0]}); err == nil {
		t.Fatal("OutboxDone took entries out of seq order")
	}
	if got := pendingKeys(t, c); len(got) != len(keys) {
		t.Fatalf("after a refused OutboxDone: pending %v", got)
	}
	if err := c.OutboxDone(ctx, es); err != nil {
		t.Fatal(err)
	}
	left := pending(t, c)
	if p2, ok := left[PathKey("p2")]; len(left) != 1 || !ok || p2.MetaDone || p2.Seq <= es[len(es)-1].Seq {
		t.Fatalf("left %+v; want p2 alone, pending, with a seq above %d", left, es[len(es)-1].Seq)
	}
}

// openWithDocA opens a catalog holding document "a" and an empty outbox.
func openWithDocA(t *testing.T) (*Catalog, context.Context) {
	t.Helper()
	c := openTest(t)
	addDoc(t, c, "a", "")
	clearOutbox(t, c)
	return c, context.Background()
}

// The applier's reads and range deletes of pending keys use outbox_pending alone, never the
// table as well.
func TestPendingOutboxUsesTheCoveringIndex(t *testing.T) {
	t.Parallel()
	c, _ := openWithDocA(t)
	for _, q := range []string{pendingOutboxQuery, outboxDoneRange} {
		if plan := sqlplan.Of(t, c.w, q, 0, 10); len(plan) != 1 || !strings.Contains(plan[0], "USING COVERING INDEX outbox_pending") {
			t.Errorf("%s: plan %q, want a search of outbox_pending alone", q, plan)
		}
	}
}
