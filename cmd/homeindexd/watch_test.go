package main

import (
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/filesync"
	"github.com/homeindex/homeindex/internal/watch"
)

func TestStatusTableShowsTheWatchFallback(t *testing.T) {
	var b strings.Builder
	printWatch(&b, &watch.Status{Mode: "inotify+rewalk", Watches: 3, Budget: 3, Fallback: true, UnwatchedDirs: 7,
		RewalkSeconds: 30, Reasons: []string{"watch budget reached"}})
	want := "change detection: inotify+rewalk, 3 of 3 inotify watches; fallback: 7 directories re-walked every 30s (watch budget reached)\n"
	if b.String() != want {
		t.Fatalf("got %q\nwant %q", b.String(), want)
	}
	b.Reset()
	printWatch(&b, nil)
	if b.Len() != 0 {
		t.Fatalf("no watcher printed %q", b.String())
	}
}

func TestAddStatsSumsWhatSyncsDid(t *testing.T) {
	a := addStatsFixture(10, 2, 1, time.Second)
	b := addStatsFixture(10, 1, 0, 2*time.Second)
	got := addStats(a, b)
	if got.Added != 3 || got.Walked != 10 || got.Unsettled != 0 || got.Duration != 3*time.Second {
		t.Fatalf("sum %+v", got)
	}
}

func addStatsFixture(walked, added, unsettled int, d time.Duration) filesync.Stats {
	return filesync.Stats{Walked: walked, Added: added, Unsettled: unsettled, Duration: d}
}
