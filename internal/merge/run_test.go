package merge

import (
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/protocol"
)

// Run consumes results as they come and wakes OnMerged for each.
func TestRunConsumes(t *testing.T) {
	f := newFixture(t, Config{})
	ids := []string{docA, docB, "00000000000000cc"}
	for _, id := range ids {
		f.addDoc(id, id+".txt", "", "m1")
		f.dispatch(id, "m1")
	}
	f.runMerger(f.m)
	for range ids {
		f.work("m1", func(item string) string { return result("m1", item, `"title":"t"`, `"words"`) })
	}
	seen := map[string]bool{}
	for range ids {
		select {
		case got := <-f.merged:
			seen[got[0]] = true
		case <-time.After(waitTimeout):
			t.Fatalf("OnMerged called for %v only", seen)
		}
	}
	for _, id := range ids {
		if !seen[id] || f.doc(id).Next != "m2" {
			t.Fatalf("%s not merged", id)
		}
	}
}

// With Redis down, Run backs off (capped, never a busy loop) and logs the outage once; when
// Redis is back it logs the recovery and merges again.
func TestRunSurvivesRedisOutage(t *testing.T) {
	f := newFixture(t, Config{})
	f.m.backoffMin, f.m.backoffMax = 20*time.Millisecond, 80*time.Millisecond
	f.addDoc(docA, "a.txt", "", "m1")
	f.runMerger(f.m)

	f.srv.Kill()
	start := time.Now()
	waitFor(t, "four failed tries", func() bool { return f.m.retries.Load() >= 4 })
	// Waits before tries 2..4: 20+40+80 ms at least.
	if elapsed := time.Since(start); elapsed < 140*time.Millisecond {
		t.Fatalf("4 tries in %v: not backing off", elapsed)
	}
	if n := f.logs.count("merger stalled"); n != 1 {
		t.Fatalf("%d outage log lines, want 1:\n%s", n, f.logs.String())
	}

	f.srv.Restart() // an empty Redis: the dispatcher would re-dispatch from the catalog
	waitFor(t, "the recovery log line", func() bool { return f.logs.count("merger resumed") == 1 })
	f.dispatch(docA, "m1")
	f.work("m1", func(item string) string { return result("m1", item, `"title":"after"`, "") })
	waitFor(t, "the merge after the outage", func() bool { return f.m.Stats().Merged == 1 })
	if n := f.logs.count("merger stalled"); n != 1 {
		t.Fatalf("%d outage log lines, want 1", n)
	}
}

// A result stranded in modules:done:processing while the merger runs (Redis ran a take, then
// died before its reply came, and the client never learnt of it) is put back and merged once
// the merger is idle, not only at the next start or after an error.
func TestRunReplaysAResultStrandedWhileRunning(t *testing.T) {
	f := newFixture(t, Config{Block: 100 * time.Millisecond})
	f.addDoc(docA, "a.txt", "", "m1")
	f.addDoc(docB, "b.txt", "", "m1")
	f.dispatch(docB, "m1")
	f.runMerger(f.m)
	// docB's merge shows the merger past its start, where it restores anyway.
	f.work("m1", func(item string) string { return result("m1", item, `"title":"b"`, "") })
	waitFor(t, "docB merged", func() bool { return f.m.Stats().Merged == 1 })

	f.dispatch(docA, "m1")
	item := f.take("m1")
	f.finish("m1", item, result("m1", item, `"title":"a"`, ""))
	// What the lost take left: the result moved, by Redis itself, out of the merger's sight.
	if err := f.rdb.LMove(f.ctx, protocol.DoneKey, protocol.DoneProcessingKey, "LEFT", "RIGHT").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the stranded result merged", func() bool { return f.m.Stats().Merged == 2 })
	if d := f.doc(docA); string(d.Fields["title"]) != `"a"` || d.Next != "m2" {
		t.Fatalf("doc A %+v", d)
	}
	// The merge is counted before its result leaves the processing list (the acknowledgement
	// follows the catalog's commit), so wait for the list to empty rather than read it once.
	waitFor(t, "nothing left in "+protocol.DoneProcessingKey, func() bool { return f.llen(protocol.DoneProcessingKey) == 0 })
}

// A result Handle keeps failing on is quarantined after maxHandleFailures tries, with the
// error, and the results behind it are merged.
func TestRunQuarantinesAResultItCannotHandle(t *testing.T) {
	// One result per round, so the count of replays below is exact (batches: batch_test.go).
	f := newFixture(t, Config{Batch: 1})
	f.m.backoffMin, f.m.backoffMax = time.Millisecond, 5*time.Millisecond
	f.m.afterCommit = func(ref queue.JobRef) error {
		if ref.ID == docA {
			return errCrash
		}
		return nil
	}
	f.addDoc(docA, "a.txt", "", "m1")
	f.addDoc(docB, "b.txt", "", "m1")
	f.dispatch(docA, "m1")
	f.dispatch(docB, "m1")
	f.work("m1", func(item string) string { return result("m1", item, `"title":"a"`, "") })
	f.work("m1", func(item string) string { return result("m1", item, `"title":"b"`, "") })
	f.runMerger(f.m)
	waitFor(t, "both results handled", func() bool {
		s := f.m.Stats()
		return s.Quarantined == 1 && s.Merged == 2
	})
	if s := f.m.Stats(); s.Replayed != maxHandleFailures-1 {
		t.Fatalf("stats %+v", s)
	}
	rec := f.lastQuarantined()
	if !strings.Contains(rec.Reason, "could not be handled after 10 tries: simulated crash") || !strings.Contains(rec.Payload, docA) {
		t.Fatalf("quarantine record %+v", rec)
	}
	if d := f.doc(docB); string(d.Fields["title"]) != `"b"` {
		t.Fatalf("doc B %+v", d)
	}
}

// A full take is followed by the next at once; after a short one Run gathers (waits Gather)
// before taking again, and stopping the merger ends that wait.
func TestRunGathersAfterAShortTake(t *testing.T) {
	f := newFixture(t, Config{Batch: 2, Gather: time.Hour})
	ids := []string{docA, docB, "00000000000000cc"}
	for _, id := range ids {
		f.addDoc(id, id+".txt", "", "m1")
		f.dispatch(id, "m1")
	}
	for range ids {
		f.work("m1", func(item string) string { return result("m1", item, `"title":"t"`, "") })
	}
	stop := f.runMerger(f.m)
	// Two results (a full take), then the third at once: an hour's gather would hold it.
	waitFor(t, "the three results merged", func() bool { return f.m.Stats().Merged == 3 })
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(waitTimeout):
		t.Fatal("Run did not stop during its gather")
	}
}
