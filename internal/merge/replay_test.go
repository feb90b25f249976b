package merge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/protocol"
)

// runMerger runs m.Run until the test ends (or stop is called) and checks it returns nil.
func (f *fixture) runMerger(m *Merger) (stop func()) {
	f.t.Helper()
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			f.t.Errorf("run: %v", err)
		}
	}
	f.t.Cleanup(stop)
	return stop
}

// The daemon dies after the catalog commit and before the result leaves
// modules:done:processing: at the next start Run puts it back, Merge reports a replay, nothing
// changes on disk, and the result and its in-flight entry are released.
func TestReplayAfterCrashBetweenCommitAndAck(t *testing.T) {
	f := newFixture(t, Config{})
	f.addDoc(docA, "drive1/a.txt", "drive1", "m1")
	f.dispatch(docA, "m1")
	f.work("m1", func(item string) string { return result("m1", item, `"title":"once"`, `"some words"`) })
	f.m.afterCommit = func(queue.JobRef) error { return errCrash }
	if err := f.handleNext(); !errors.Is(err, errCrash) {
		t.Fatalf("handle: %v", err)
	}
	if n := f.llen(protocol.DoneProcessingKey); n != 1 {
		t.Fatalf("%d results in processing after the crash, want 1", n)
	}
	f.drain()
	docPath := filepath.Join(f.metaDir, "by-id", docA, "document.json")
	contentPath := filepath.Join(f.metaDir, "by-id", docA, "m1", "content.json")
	doc := f.readMeta("by-id/" + docA + "/document.json")
	chunks := f.readMeta("by-id/" + docA + "/m1/chunks.json")
	stDoc, _ := os.Stat(docPath)
	stContent, _ := os.Stat(contentPath)

	// Restart: a new merger's Run restores the leftover and replays it.
	m := f.newMerger(Config{Pipeline: []string{"m1", "m2"}})
	stop := f.runMerger(m)
	waitFor(t, "the replay", func() bool {
		_, inFlight, _ := f.q.JobItem(f.ctx, "m1", docA)
		return m.Stats().Replayed == 1 && f.llen(protocol.DoneProcessingKey) == 0 && !inFlight
	})
	stop()
	if s := m.Stats(); s.Merged != 0 || s.Stale != 0 {
		t.Fatalf("stats %+v", s)
	}
	if keys := f.outboxKeys(); len(keys) != 0 {
		t.Fatalf("replay dirtied %v", keys)
	}
	f.drain()
	if got := f.readMeta("by-id/" + docA + "/document.json"); string(got) != string(doc) {
		t.Fatalf("document.json changed by the replay:\n%s\n%s", doc, got)
	}
	if got := f.readMeta("by-id/" + docA + "/m1/chunks.json"); string(got) != string(chunks) {
		t.Fatal("chunks.json changed by the replay")
	}
	for path, st := range map[string]os.FileInfo{docPath: stDoc, contentPath: stContent} {
		if now, err := os.Stat(path); err != nil || !now.ModTime().Equal(st.ModTime()) {
			t.Fatalf("%s rewritten by the replay (%v)", path, err)
		}
	}
	if n, _ := f.cat.MergeCount(f.ctx, docA, "m1"); n != 1 {
		t.Fatalf("merged %d times", n)
	}
}
