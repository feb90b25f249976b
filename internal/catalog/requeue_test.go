package catalog

import (
	"context"
	"maps"
	"slices"
	"testing"
)

// NextValues counts live documents by `next`; HasPending says whether any has a module due.
func TestNextValuesAndHasPending(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	if yes, err := c.HasPending(ctx); err != nil || yes {
		t.Fatalf("HasPending on an empty catalog = %v, %v", yes, err)
	}
	addDoc(t, c, "a", "m1")
	addDoc(t, c, "b", "m1")
	addDoc(t, c, "c", "m2")
	addDoc(t, c, "d", "")
	addDoc(t, c, "r", "m2")
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetMissing(ctx, "r", timeT0) })
	got, err := c.NextValues(ctx)
	if err != nil || !maps.Equal(got, map[string]int64{"m1": 2, "m2": 1, "": 1}) {
		t.Fatalf("NextValues = %v, %v", got, err)
	}
	if yes, _ := c.HasPending(ctx); !yes {
		t.Fatal("HasPending = false with modules due")
	}
}

// MoveNext moves every document at one module to another and dirties them and their drives'
// markers; documents elsewhere in the chain stay.
func TestMoveNext(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "old", "archive/usb/a.txt")
	addDoc(t, c, "b", "old", "b.txt")
	addDoc(t, c, "c", "other", "c.txt")
	clearOutbox(t, c)
	n, err := c.MoveNext(ctx, "old", "new")
	if err != nil || n != 2 {
		t.Fatalf("MoveNext = %d, %v", n, err)
	}
	for id, want := range map[string]string{"a": "new", "b": "new", "c": "other"} {
		if got := next(t, c, id); got != want {
			t.Errorf("%s: next %q, want %q", id, got, want)
		}
	}
	if got := pendingKeys(t, c); !slices.Equal(got, []string{DocKey("a"), DocKey("b"), DriveKey("usb")}) {
		t.Fatalf("dirtied %v", got)
	}
	if n, err := c.MoveNext(ctx, "nobody", "x"); err != nil || n != 0 {
		t.Fatalf("MoveNext of nothing = %d, %v", n, err)
	}
}

// DeleteModuleJobs forgets a module's jobs in one state or all; RequeueParked turns parked jobs
// back into queued ones under new tokens, attempt 1.
func TestModuleJobsDeleteAndRequeue(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	putJob(t, c, "a", "m", "ta", JobQueued)
	putJob(t, c, "b", "m", "tb", JobParked)
	putJob(t, c, "c", "m", "tc", JobParked)
	putJob(t, c, "a", "other", "to", JobQueued)
	if err := c.RequeueParked(ctx, "m", map[string]string{"b": "new-b", "a": "not-parked"}, 99); err != nil {
		t.Fatal(err)
	}
	b, _, _ := c.Job(ctx, "b", "m")
	if b.State != JobQueued || b.Token != "new-b" || b.Attempt != 1 || b.Reason != "" || b.Updated.UnixMilli() != 99 {
		t.Fatalf("requeued b = %+v", b)
	}
	if a, _, _ := c.Job(ctx, "a", "m"); a.Token != "ta" {
		t.Fatalf("a queued job was requeued: %+v", a)
	}
	if n, err := c.DeleteModuleJobs(ctx, "m", JobParked); err != nil || n != 1 {
		t.Fatalf("DeleteModuleJobs(parked) = %d, %v; want c", n, err)
	}
	if n, err := c.DeleteModuleJobs(ctx, "m", ""); err != nil || n != 2 {
		t.Fatalf("DeleteModuleJobs(all) = %d, %v; want a and b", n, err)
	}
	if _, ok, _ := c.Job(ctx, "a", "other"); !ok {
		t.Fatal("another module's job was deleted")
	}
}
