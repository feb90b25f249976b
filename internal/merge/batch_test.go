package merge

import (
	"testing"
	"time"
)

// One batch mixes every kind of result: the successes are merged by one commit (a duplicate
// in the same batch is a replay), the malformed one is quarantined, the failure report ends
// its attempt, an unknown module's is dropped, and every result leaves
// modules:done:processing.
func TestBatchMixesOutcomes(t *testing.T) {
	const docC, docD = "00000000000000cc", "00000000000000dd"
	f := newFixture(t, Config{})
	for _, id := range []string{docA, docB, docC, docD} {
		f.addDoc(id, id+".txt", "", "m1")
		f.dispatch(id, "m1")
	}
	okA := f.work("m1", func(item string) string { return result("m1", item, `"title":"a"`, "") })
	f.work("m1", func(item string) string { return result("m1", item, `"title":"b"`, "") })
	f.work("m1", func(item string) string { return result("m1", item, "", "") + "}" }) // truncated JSON's cousin: trailing data
	f.work("m1", func(item string) string { return failure("m1", item, "boom", false) })
	f.pushDone(okA)                       // a duplicate of A's result
	f.pushDone(result("m9", okA, "", "")) // m9 is not configured: dropped

	taken, err := f.q.NextDones(f.ctx, time.Second, 64, DefaultMaxPayload)
	if err != nil || len(taken.Results) != 6 {
		t.Fatalf("NextDones: %d results, %v; want 6", len(taken.Results), err)
	}
	if err := f.m.HandleBatch(f.ctx, taken.Results); err != nil {
		t.Fatal(err)
	}
	s := f.m.Stats()
	if s.Merged != 2 || s.Replayed != 1 || s.Quarantined != 1 || s.Failed != 1 || s.UnknownModule != 1 {
		t.Fatalf("stats %+v; want 2 merged, 1 replayed, 1 quarantined, 1 failed, 1 unknown module", s)
	}
	if got := string(f.doc(docA).Fields["title"]); got != `"a"` {
		t.Fatalf("doc A title %s", got)
	}
	if got := string(f.doc(docB).Fields["title"]); got != `"b"` {
		t.Fatalf("doc B title %s", got)
	}
	if n := f.llen("modules:done:processing"); n != 0 {
		t.Fatalf("%d results left in modules:done:processing", n)
	}
}
