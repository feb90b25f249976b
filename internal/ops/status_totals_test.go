package ops

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/filesync"
	"github.com/homeindex/homeindex/internal/testutil/wait"
	"github.com/homeindex/homeindex/internal/watch"
)

// syncState is the sync side of Files as the totals read it: how many syncs ended and whether
// one runs.
type syncState struct {
	syncs   atomic.Int64
	running atomic.Bool
}

func (s *syncState) LastSync(context.Context) (*filesync.SyncRecord, int64, int64) {
	return nil, s.syncs.Load(), 0
}
func (s *syncState) SyncProgress() filesync.Progress {
	return filesync.Progress{Running: s.running.Load()}
}
func (s *syncState) Missing(context.Context) (filesync.MissingState, error) {
	return filesync.MissingState{}, nil
}
func (s *syncState) ConfirmMissing(context.Context) error { return nil }
func (s *syncState) WatchStatus() *watch.Status           { return nil }

// addDocuments inserts n live documents, each with one path, plus retired ones.
func addDocuments(t *testing.T, cat *catalog.Catalog, from, n, retired int) {
	t.Helper()
	err := cat.Update(context.Background(), func(tx *catalog.Tx) error {
		for i := from; i < from+n+retired; i++ {
			id := fmt.Sprintf("%016x", i)
			if _, err := tx.InsertDocument(context.Background(), catalog.DocRow{ID: id, Type: "text/plain", Size: 1, Version: 1, Retired: i >= from+n}); err != nil {
				return err
			}
			if i < from+n {
				if err := tx.PutFile(context.Background(), catalog.File{Path: fmt.Sprintf("f%06d", i), DocID: id, Dev: 1, Ino: uint64(i + 1), Size: 1, MtimeNs: 1}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The first status counts; after a sync ends the next one counts again while its caller
// waits; during a sync a status never waits for a count but gets the last totals, refreshed
// in the background at most every totalsRunningTTL.
func TestStatusTotalsDuringASyncComeWithoutWaiting(t *testing.T) {
	ctx := context.Background()
	cat, err := catalog.Open(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	addDocuments(t, cat, 0, 10, 2)
	files := &syncState{}
	c := &totalsCache{}
	t0 := time.Now()
	get := func(at time.Duration) DocumentCounts {
		t.Helper()
		d, err := c.get(ctx, files, cat, t0.Add(at), zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// counting reports whether a background count runs, and when the totals were counted.
	counting := func() (bool, time.Time) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.counting, c.at
	}
	if d := get(0); d != (DocumentCounts{Live: 10, Retired: 2, Files: 10}) {
		t.Fatalf("first status: %+v, want 10 live, 2 retired, 10 files", d)
	}

	// A sync runs and adds documents: statuses answer with the last totals at once.
	files.running.Store(true)
	addDocuments(t, cat, 100, 5, 0)
	if d := get(time.Second); d.Live != 10 {
		t.Fatalf("status during a sync, 1 s after the count: %+v, want the last totals (10 live)", d)
	}
	if busy, at := counting(); busy || !at.Equal(t0) {
		t.Fatal("a status within totalsRunningTTL of the last count started a count")
	}
	if d := get(totalsRunningTTL + time.Second); d.Live != 10 {
		t.Fatalf("stale status during a sync: %+v, want the last totals (10 live) at once", d)
	}
	wait.For(t, "a background count after the totals went stale during a sync", func() bool {
		busy, at := counting()
		return !busy && at.After(t0)
	})
	if d := get(totalsRunningTTL + 2*time.Second); d.Live != 15 || d.Files != 15 {
		t.Fatalf("status after the background count: %+v, want 15 live, 15 files", d)
	}

	// The sync ends: the next status counts before answering, exactly.
	addDocuments(t, cat, 200, 1, 0)
	files.running.Store(false)
	files.syncs.Add(1)
	if d := get(totalsRunningTTL + 3*time.Second); d != (DocumentCounts{Live: 16, Retired: 2, Files: 16}) {
		t.Fatalf("first status after the sync ended: %+v, want 16 live, 2 retired, 16 files", d)
	}
	if busy, at := counting(); busy || !at.Equal(t0.Add(totalsRunningTTL+3*time.Second)) {
		t.Fatal("the count after a sync ended ran in the background")
	}
}
