package catalog

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

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
