package filesync_test

import (
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/filesync"
)

// The sync progress line's rate and ETA: bytes left to hash at the rate so far once the walk
// is over; while walking, the files the catalog knew and the walk has not reached at the walk's
// rate (or the hashing backlog if longer); unknown on a first sync still walking.
func TestSyncProgressETA(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	now := t0.Add(10 * time.Second)
	for _, tc := range []struct {
		name string
		p    filesync.Progress
		want time.Duration
		ok   bool
	}{
		{"not running", filesync.Progress{}, 0, false},
		{"walk done, hashing: 100 MB left at 10 MB/s", filesync.Progress{Running: true, Started: t0, WalkDone: true,
			ToHashBytes: 200e6, HashedBytes: 100e6}, 10 * time.Second, true},
		{"walk done, all hashed", filesync.Progress{Running: true, Started: t0, WalkDone: true, ToHashBytes: 5, HashedBytes: 5}, 0, true},
		{"first sync walking", filesync.Progress{Running: true, Started: t0, Walked: 1000}, 0, false},
		{"walking a known tree: 3000 of 4000 files in 10 s", filesync.Progress{Running: true, Started: t0, Walked: 3000,
			KnownFiles: 4000}, 10 * time.Second / 3, true},
		{"walking, hashing behind", filesync.Progress{Running: true, Started: t0, Walked: 3000, KnownFiles: 4000,
			ToHashBytes: 300e6, HashedBytes: 100e6}, 20 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.p.ETA(now)
			if ok != tc.ok || got.Round(time.Millisecond) != tc.want.Round(time.Millisecond) {
				t.Fatalf("ETA = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	if got := (filesync.Progress{Running: true, Started: t0, HashedBytes: 250e6}).MBps(now); got != 25 {
		t.Fatalf("MBps = %v, want 25", got)
	}
}
