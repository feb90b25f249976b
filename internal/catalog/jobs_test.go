package catalog

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A job row round-trips; PutJob replaces; Jobs filters by module and state, oldest first.
func TestJobRows(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "m1", "a.txt")
	addDoc(t, c, "b", "m1", "b.txt")
	since := time.UnixMilli(1_700_000_000_123)
	j := Job{DocID: "a", Module: "m1", Token: "t1", Attempt: 2, State: JobQueued, Reason: "r", Since: since, Updated: since.Add(time.Second)}
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.PutJob(ctx, j) })
	got, ok, err := c.Job(ctx, "a", "m1")
	if err != nil || !ok || !got.Since.Equal(j.Since) || !got.Updated.Equal(j.Updated) {
		t.Fatalf("Job = %+v %v %v", got, ok, err)
	}
	got.Since, got.Updated = j.Since, j.Updated
	if got != j {
		t.Fatalf("Job = %+v, want %+v", got, j)
	}
	if _, ok, _ := c.Job(ctx, "a", "m2"); ok {
		t.Fatal("a job of another module found")
	}
	putJob(t, c, "b", "m1", "t2", JobParked)
	j.State, j.Token = JobParked, "t3"
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.PutJob(ctx, j) })
	parked, err := c.Jobs(ctx, "m1", JobParked, 0)
	if err != nil || len(parked) != 2 || parked[0].DocID != "b" {
		t.Fatalf("Jobs(parked) = %+v, %v; want b (older) then a", parked, err)
	}
	if one, _ := c.Jobs(ctx, "m1", JobParked, 1); len(one) != 1 {
		t.Fatalf("Jobs with limit 1 = %+v", one)
	}
	if q, _ := c.Jobs(ctx, "m1", JobQueued, 0); len(q) != 0 {
		t.Fatalf("Jobs(queued) = %+v", q)
	}
	update(t, c, func(ctx context.Context, tx *Tx) error {
		if err := tx.DeleteJob(ctx, "a", "m1"); err != nil {
			return err
		}
		_, ok, err := tx.Job(ctx, "a", "m1")
		if ok {
			t.Error("deleted job still read in the transaction")
		}
		return err
	})
}

// Stranded jobs are queued jobs whose document lost every available path, went missing or is
// gone; QueuedTierB names queued jobs of documents off any present drive.
func TestStrandedAndTierBJobs(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "onusb", "m", "archive/usb/a.txt")
	addDoc(t, c, "local", "m", "b.txt")
	addDoc(t, c, "missing", "m")
	addDoc(t, c, "parked", "m")
	for _, id := range []string{"onusb", "local", "missing", "gone"} {
		putJob(t, c, id, "m", "t-"+id, JobQueued)
	}
	putJob(t, c, "parked", "m", "t", JobParked)
	update(t, c, func(ctx context.Context, tx *Tx) error {
		if err := tx.SetMissing(ctx, "missing", timeT0); err != nil {
			return err
		}
		if err := tx.SetDrivePresent(ctx, "usb", false); err != nil {
			return err
		}
		return tx.Dirty(ctx, DocKey("onusb")) // its dispatch order follows its drive
	})
	got, err := c.StrandedJobs(ctx, "m")
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"gone", "missing", "onusb"}) {
		t.Fatalf("StrandedJobs = %v, %v", got, err)
	}
	if got, err := c.QueuedTierB(ctx, "m"); err != nil || !slices.Equal(got, []string{"local"}) {
		t.Fatalf("QueuedTierB = %v, %v", got, err)
	}
	n, err := c.DeleteQueuedJobs(ctx)
	if err != nil || n != 4 {
		t.Fatalf("DeleteQueuedJobs = %d, %v", n, err)
	}
	if _, ok, _ := c.Job(ctx, "parked", "m"); !ok {
		t.Fatal("a parked job was forgotten with the queued ones")
	}
}
