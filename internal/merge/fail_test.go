package merge

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/protocol"
)

// failure is the done message of a failed attempt, as the Go SDK writes it.
func failure(module, item, reason string, permanent bool) string {
	s := `{"module":` + quote(module) + `,"document":` + item + `,"` + protocol.DoneErrorField + `":` + quote(reason)
	if permanent {
		s += `,"` + protocol.DonePermanentField + `":true`
	}
	return s + "}"
}

// A module-reported error is a failed attempt: the next attempt is queued (here at once:
// negative Base), the document does not move, nothing is merged.
func TestModuleErrorRetries(t *testing.T) {
	f := newFixture(t, Config{Policy: queue.RetryPolicy{MaxAttempts: 3, Base: -1}})
	f.addDoc(docA, "a.txt", "", "m1")
	f.dispatch(docA, "m1")
	f.work("m1", func(item string) string { return failure("m1", item, "model not loaded", false) })
	f.mustHandleNext()
	if s := f.m.Stats(); s.Failed != 1 || s.Merged != 0 || s.Permanent != 0 {
		t.Fatalf("stats %+v", s)
	}
	next, err := f.rdb.LIndex(f.ctx, protocol.CheckKey("m1"), 0).Result()
	if err != nil {
		t.Fatalf("no next attempt queued: %v", err)
	}
	if info, _ := protocol.ParseItem(next); info.ID != docA || info.Job.Attempt != 2 {
		t.Fatalf("next attempt %+v", info)
	}
	if j, ok := f.job(docA, "m1"); !ok || j.State != catalog.JobQueued {
		t.Fatalf("job %+v %v", j, ok)
	}
	f.assertUntouched(docA, "m1", "m1")

	// The second attempt succeeds.
	f.work("m1", func(item string) string { return result("m1", item, `"title":"ok"`, "") })
	f.mustHandleNext()
	if d := f.doc(docA); f.m.Stats().Merged != 1 || d.Next != "m2" {
		t.Fatalf("stats %+v doc %+v", f.m.Stats(), d)
	}
}

// The last allowed attempt failing parks the job: the document records why and moves on.
func TestModuleErrorParksAtMaxAttempts(t *testing.T) {
	f := newFixture(t, Config{Policy: queue.RetryPolicy{MaxAttempts: 1}})
	f.addDoc(docA, "a.txt", "", "m1")
	f.dispatch(docA, "m1")
	f.work("m1", func(item string) string { return failure("m1", item, "boom", false) })
	f.mustHandleNext()
	if s := f.m.Stats(); s.Failed != 1 || s.Permanent != 0 {
		t.Fatalf("stats %+v", s)
	}
	f.assertParked(docA, "m1", "boom", "m2")
}

// A permanent failure parks at once, whatever MaxAttempts says.
func TestPermanentFailureParks(t *testing.T) {
	f := newFixture(t, Config{Pipeline: []string{"m1"}, Policy: queue.RetryPolicy{MaxAttempts: 5}})
	f.addDoc(docA, "drive1/a.txt", "drive1", "m1")
	f.dispatch(docA, "m1")
	f.work("m1", func(item string) string { return failure("m1", item, "unsupported format", true) })
	f.mustHandleNext()
	if s := f.m.Stats(); s.Permanent != 1 || s.Failed != 0 {
		t.Fatalf("stats %+v", s)
	}
	f.assertParked(docA, "m1", "unsupported format", "")
	if st, _ := f.cat.DriveStatus(f.ctx, "drive1"); st.Pending {
		t.Fatal("a parked last job leaves the drive pending")
	}
	if got := <-f.merged; got != [2]string{docA, "m1"} {
		t.Fatalf("OnMerged %v", got)
	}
}

func (f *fixture) assertParked(id, module, reason, next string) {
	f.t.Helper()
	j, ok := f.job(id, module)
	if !ok || j.State != catalog.JobParked || j.Reason != reason {
		f.t.Fatalf("job %+v %v", j, ok)
	}
	d := f.doc(id)
	var failures map[string]struct {
		Reason   string `json:"reason"`
		Attempts int    `json:"attempts"`
	}
	if err := json.Unmarshal(d.Failures, &failures); err != nil || failures[module].Reason != reason {
		f.t.Fatalf("failures %s (%v)", d.Failures, err)
	}
	if d.Next != next {
		f.t.Fatalf("next %q, want %q", d.Next, next)
	}
	rec, ok, err := f.q.FailedJobOf(f.ctx, module, id)
	if err != nil || !ok || rec.Reason != reason {
		f.t.Fatalf("parked record %+v %v %v", rec, ok, err)
	}
	if n := f.llen(protocol.DoneProcessingKey); n != 0 {
		f.t.Fatalf("%d results left in processing", n)
	}
}

// A crash after the queue parked the job but before the catalog recorded it: the replay finds
// the attempt stale in Redis and records the park from the parked record. A second replay
// changes nothing.
func TestPermanentFailureReplayAfterCrash(t *testing.T) {
	f := newFixture(t, Config{Policy: queue.RetryPolicy{MaxAttempts: 5}})
	f.addDoc(docA, "a.txt", "", "m1")
	item := f.dispatch(docA, "m1")
	payload := f.work("m1", func(item string) string { return failure("m1", item, "corrupt file", true) })
	raw, err := f.q.NextDone(f.ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// What Handle did before the crash: the queue side only.
	info, _ := protocol.ParseItem(item)
	ref := queue.JobRef{Module: "m1", ID: docA, Token: info.Job.Token, Attempt: 1}
	if out, err := f.q.Fail(f.ctx, ref, "corrupt file", queue.RetryPolicy{MaxAttempts: 1}); err != nil || out != queue.OutcomeParked {
		t.Fatalf("fail: %v %v", out, err)
	}
	if err := f.m.Handle(f.ctx, raw); err != nil {
		t.Fatal(err)
	}
	f.assertParked(docA, "m1", "corrupt file", "m2")
	f.drain()
	doc := f.readMeta("by-id/" + docA + "/document.json")

	f.pushDone(payload)
	f.mustHandleNext()
	if s := f.m.Stats(); s.Permanent != 1 || s.Stale != 1 {
		t.Fatalf("stats %+v", s)
	}
	if keys := f.outboxKeys(); len(keys) != 0 {
		t.Fatalf("second replay dirtied %v", keys)
	}
	if got := f.readMeta("by-id/" + docA + "/document.json"); string(got) != string(doc) {
		t.Fatal("document.json changed by a replay")
	}
}

// An error field with an empty reason is still a failure, never a success.
func TestEmptyErrorIsAFailure(t *testing.T) {
	f := newFixture(t, Config{Policy: queue.RetryPolicy{MaxAttempts: 1}})
	f.addDoc(docA, "a.txt", "", "m1")
	f.dispatch(docA, "m1")
	f.work("m1", func(item string) string { return failure("m1", item, "", false) })
	f.mustHandleNext()
	if s := f.m.Stats(); s.Failed != 1 || s.Merged != 0 {
		t.Fatalf("stats %+v", s)
	}
	f.assertParked(docA, "m1", "module reported a failure without a reason", "m2")
}

// A huge reason is cut before it reaches Redis and the catalog.
func TestFailureReasonIsBounded(t *testing.T) {
	f := newFixture(t, Config{Policy: queue.RetryPolicy{MaxAttempts: 1}})
	f.addDoc(docA, "a.txt", "", "m1")
	f.dispatch(docA, "m1")
	f.work("m1", func(item string) string { return failure("m1", item, strings.Repeat("é", 100_000), false) })
	f.mustHandleNext()
	j, _ := f.job(docA, "m1")
	if len(j.Reason) > maxReason+len("…") || !strings.HasPrefix(j.Reason, "éé") {
		t.Fatalf("reason of %d bytes", len(j.Reason))
	}
}
