package catalog

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

var chain = []string{"m1", "m2"}

func mergeInput(id, module, token string, fields string) MergeInput {
	var f map[string]json.RawMessage
	if fields != "" {
		if err := json.Unmarshal([]byte(fields), &f); err != nil {
			panic(err)
		}
	}
	return MergeInput{DocID: id, Module: module, Token: token, Fields: f, Pipeline: chain, At: timeT0}
}

// A result of the job in flight is applied once: fields merged shallowly, `next` advanced,
// the job row gone, the merge recorded, the document and its drives dirtied (and its chunks
// with content). The same result again is a replay that changes nothing.
func TestMergeAppliesOnceThenReplays(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "m1", "archive/usb/a.txt")
	update(t, c, func(ctx context.Context, tx *Tx) error {
		return tx.Dirty(ctx, DocKey("a")) // keep: merges must dirty on their own
	})
	putJob(t, c, "a", "m1", "tok", JobQueued)
	first := mergeInput("a", "m1", "tok", `{"caption": {"text": "a cat"}, "tags": ["x"]}`)
	if out, err := c.Merge(ctx, first); err != nil || out != MergeApplied {
		t.Fatalf("Merge = %v, %v", out, err)
	}
	clearOutbox(t, c)
	putJob(t, c, "a", "m2", "tok2", JobQueued)
	second := mergeInput("a", "m2", "tok2", `{"caption": {"lang": "en"}}`)
	second.Content = true
	if out, err := c.Merge(ctx, second); err != nil || out != MergeApplied {
		t.Fatalf("Merge of m2 = %v, %v", out, err)
	}
	d, _, err := c.Document(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if d.Next != "" || string(d.Fields["caption"]) != `{"lang":"en"}` || string(d.Fields["tags"]) != `["x"]` {
		t.Fatalf("document next %q fields %s", d.Next, d.Fields)
	}
	if _, ok, _ := c.Job(ctx, "a", "m2"); ok {
		t.Fatal("the merged job's row is still there")
	}
	if got := pendingKeys(t, c); !slices.Equal(got, []string{ChunksKey("a", "m2"), DocKey("a"), DriveKey("usb")}) {
		t.Fatalf("dirtied %v", got)
	}
	clearOutbox(t, c)
	if out, err := c.Merge(ctx, second); err != nil || out != MergeReplayed {
		t.Fatalf("replay = %v, %v", out, err)
	}
	if got := pendingKeys(t, c); len(got) != 0 {
		t.Fatalf("a replay dirtied %v", got)
	}
	if n, _ := c.MergeCount(ctx, "a", "m2"); n != 1 {
		t.Fatalf("MergeCount = %d, want 1", n)
	}
	// The module runs again (a new job): merged, and counted; the earlier token is now stale.
	putJob(t, c, "a", "m2", "tok3", JobQueued)
	outs, err := c.MergeBatch(ctx, []MergeInput{mergeInput("a", "m2", "tok3", `{"caption": {"lang": "fr"}}`), second})
	if err != nil || !slices.Equal(outs, []MergeOutcome{MergeApplied, MergeStale}) {
		t.Fatalf("second run: %v, %v", outs, err)
	}
	if n, _ := c.MergeCount(ctx, "a", "m2"); n != 2 {
		t.Fatalf("MergeCount = %d, want 2", n)
	}
}

// A result whose job is not the one in flight is stale and changes nothing; a result for a
// document that went missing is stale and its job is forgotten.
func TestMergeStaleResults(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "m1", "a.txt")
	addDoc(t, c, "r", "m1")
	putJob(t, c, "a", "m1", "current", JobQueued)
	putJob(t, c, "r", "m1", "tr", JobQueued)
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetMissing(ctx, "r", timeT0) })
	clearOutbox(t, c)
	for name, in := range map[string]MergeInput{
		"old token":   mergeInput("a", "m1", "old", `{"x": 1}`),
		"no such job": mergeInput("a", "m2", "current", `{"x": 1}`),
		"missing doc": mergeInput("r", "m1", "tr", `{"x": 1}`),
	} {
		if out, err := c.Merge(ctx, in); err != nil || out != MergeStale {
			t.Errorf("%s: Merge = %v, %v; want stale", name, out, err)
		}
	}
	if d, _, _ := c.Document(ctx, "a"); d.Next != "m1" || d.Fields != nil {
		t.Fatalf("a stale result changed the document: %+v", d)
	}
	if _, ok, _ := c.Job(ctx, "r", "m1"); ok {
		t.Fatal("the job of a missing document kept")
	}
	if got := pendingKeys(t, c); len(got) != 0 {
		t.Fatalf("stale results dirtied %v", got)
	}
	if MergeStale.String() != "stale" || MergeApplied.String() != "applied" || MergeReplayed.String() != "replayed" {
		t.Fatal("MergeOutcome names")
	}
}

// A batch is applied in order in one transaction: a duplicate later in the batch is a replay.
func TestMergeBatchDuplicateIsReplay(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "m1", "a.txt")
	addDoc(t, c, "b", "m1", "b.txt")
	putJob(t, c, "a", "m1", "ta", JobQueued)
	putJob(t, c, "b", "m1", "tb", JobQueued)
	in := []MergeInput{mergeInput("a", "m1", "ta", `{"n": 1}`), mergeInput("b", "m1", "tb", ""), mergeInput("a", "m1", "ta", `{"n": 2}`)}
	outs, err := c.MergeBatch(ctx, in)
	if err != nil || !slices.Equal(outs, []MergeOutcome{MergeApplied, MergeApplied, MergeReplayed}) {
		t.Fatalf("MergeBatch = %v, %v", outs, err)
	}
	if d, _, _ := c.Document(ctx, "a"); string(d.Fields["n"]) != "1" || d.Next != "m2" {
		t.Fatalf("a = %+v", d)
	}
}

// JobsByToken finds the job each token belongs to, and whether its document is live.
func TestJobsByToken(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "m1", "a.txt")
	addDoc(t, c, "r", "m1")
	putJob(t, c, "a", "m1", "ta", JobQueued)
	putJob(t, c, "r", "m1", "tr", JobQueued)
	putJob(t, c, "gone", "m1", "tg", JobQueued)
	putJob(t, c, "a", "m2", "tm2", JobQueued)
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetMissing(ctx, "r", timeT0) })
	got, err := c.JobsByToken(ctx, "m1", []string{"ta", "tr", "tg", "tm2", "unknown"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]JobByToken{"ta": {DocID: "a", Live: true}, "tr": {DocID: "r"}, "tg": {DocID: "gone"}}
	if !maps.Equal(got, want) {
		t.Fatalf("JobsByToken = %+v, want %+v", got, want)
	}
}

// Park records the failure on the document, keeps the job row parked with its reason and
// moves the document on down the chain; a token that is not the job's is ignored. A later
// successful merge of that module clears its failure.
func TestParkMovesOnAndRecordsTheFailure(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "m1", "archive/usb/a.txt")
	putJob(t, c, "a", "m1", "tok", JobQueued)
	clearOutbox(t, c)
	if ok, err := c.Park(ctx, "a", "m1", "other", 3, "boom", chain, timeT0); err != nil || ok {
		t.Fatalf("Park with a stale token = %v, %v", ok, err)
	}
	if got := next(t, c, "a"); got != "m1" {
		t.Fatalf("a stale park moved the document to %q", got)
	}
	at := timeT0.Add(time.Minute)
	if ok, err := c.Park(ctx, "a", "m1", "tok", 3, "boom", chain, at); err != nil || !ok {
		t.Fatalf("Park = %v, %v", ok, err)
	}
	j, _, _ := c.Job(ctx, "a", "m1")
	if j.State != JobParked || j.Attempt != 3 || j.Reason != "boom" || !j.Updated.Equal(at) {
		t.Fatalf("parked job %+v", j)
	}
	d, _, _ := c.Document(ctx, "a")
	var failures map[string]struct {
		Reason   string
		Attempts int
		At       string
	}
	if err := json.Unmarshal(d.Failures, &failures); err != nil {
		t.Fatal(err)
	}
	if f := failures["m1"]; d.Next != "m2" || f.Reason != "boom" || f.Attempts != 3 || f.At != at.UTC().Format(time.RFC3339) {
		t.Fatalf("document next %q failures %s", d.Next, d.Failures)
	}
	if got := pendingKeys(t, c); !slices.Equal(got, []string{DocKey("a"), DriveKey("usb")}) {
		t.Fatalf("dirtied %v", got)
	}
	if ok, _ := c.Park(ctx, "nobody", "m1", "", 1, "x", chain, at); ok {
		t.Fatal("parked a job that does not exist")
	}
	// Run again (retried) and merged: the failure goes.
	putJob(t, c, "a", "m1", "retry", JobQueued)
	if out, err := c.Merge(ctx, mergeInput("a", "m1", "retry", `{"ok": true}`)); err != nil || out != MergeApplied {
		t.Fatalf("Merge = %v, %v", out, err)
	}
	if d, _, _ := c.Document(ctx, "a"); strings.Contains(string(d.Failures), "m1") {
		t.Fatalf("failure kept after a merge: %s", d.Failures)
	}
}

// MergeBatch decides each result with one lookup: the current job's result merges (the
// document moves on and is dirtied, with the markers of the drives it is on), a replay of it
// and a result of another token change nothing, and a result for a retired document drops its
// job.
func TestMergeBatchOutcomesAndDirtyKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openTest(t)
	addDoc(t, c, "ondrive", "m1", "archive/usb/a.txt")
	addDoc(t, c, "plain", "m1", "files/b.txt")
	addDoc(t, c, "gone", "m1", "files/c.txt")
	err := c.Update(ctx, func(tx *Tx) error {
		for _, id := range []string{"ondrive", "plain", "gone"} {
			if err := tx.PutJob(ctx, Job{DocID: id, Module: "m1", Token: "tok-" + id, Attempt: 1, State: JobQueued,
				Since: time.Now(), Updated: time.Now()}); err != nil {
				return err
			}
		}
		_, err := tx.tx.ExecContext(ctx, `UPDATE documents SET retired = 1 WHERE id = 'gone'`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := lastSeq(t, c)
	in := func(id, token string) MergeInput {
		return MergeInput{DocID: id, Module: "m1", Token: token, Pipeline: []string{"m1"}, At: time.Now(),
			Fields: map[string]json.RawMessage{"noop": json.RawMessage(`true`)}}
	}
	outs, err := c.MergeBatch(ctx, []MergeInput{in("ondrive", "tok-ondrive"), in("plain", "tok-plain"),
		in("plain", "tok-plain"), in("plain", "other"), in("gone", "tok-gone"), in("nodoc", "tok")})
	if err != nil {
		t.Fatal(err)
	}
	want := []MergeOutcome{MergeApplied, MergeApplied, MergeReplayed, MergeStale, MergeStale, MergeStale}
	if !slices.Equal(outs, want) {
		t.Errorf("outcomes %v, want %v", outs, want)
	}
	for id, wantNext := range map[string]string{"ondrive": "", "plain": "", "gone": "m1"} {
		if got := next(t, c, id); got != wantNext {
			t.Errorf("%s: next %q, want %q", id, got, wantNext)
		}
	}
	if _, ok, err := c.Job(ctx, "gone", "m1"); err != nil || ok {
		t.Errorf("retired document's job still there (%v, %v)", ok, err)
	}
	entries, err := c.PendingOutbox(ctx, seen, 100)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range entries {
		keys = append(keys, e.Key)
	}
	slices.Sort(keys)
	if wantKeys := []string{DocKey("ondrive"), DocKey("plain"), DriveKey("usb")}; !slices.Equal(keys, wantKeys) {
		t.Errorf("dirtied %q, want %q", keys, wantKeys)
	}
}

// lastSeq is the outbox's highest sequence number so far.
func lastSeq(t *testing.T, c *Catalog) int64 {
	t.Helper()
	var seq int64
	if err := c.r.QueryRowContext(context.Background(), `SELECT coalesce(max(seq), 0) FROM outbox`).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	return seq
}
