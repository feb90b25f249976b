package catalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// timeT0 is a fixed time for rows whose time matters.
var timeT0 = time.Unix(1_700_000_000, 0)

// update runs fn in one transaction and fails the test on error.
func update(t *testing.T, c *Catalog, fn func(ctx context.Context, tx *Tx) error) {
	t.Helper()
	ctx := context.Background()
	if err := c.Update(ctx, func(tx *Tx) error { return fn(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
}

// putJob records a (document, module) job.
func putJob(t *testing.T, c *Catalog, id, module, token string, state JobState) {
	t.Helper()
	at := time.UnixMilli(1_700_000_000_000)
	update(t, c, func(ctx context.Context, tx *Tx) error {
		return tx.PutJob(ctx, Job{DocID: id, Module: module, Token: token, Attempt: 1, State: state, Since: at, Updated: at})
	})
}

// pending returns the pending outbox entries by key.
func pending(t *testing.T, c *Catalog) map[string]OutboxEntry {
	t.Helper()
	es, err := c.PendingOutbox(context.Background(), 0, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]OutboxEntry{}
	for _, e := range es {
		out[e.Key] = e
	}
	return out
}

// pendingKeys returns the pending outbox keys, sorted.
func pendingKeys(t *testing.T, c *Catalog) []string {
	t.Helper()
	var keys []string
	for k := range pending(t, c) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// clearOutbox marks every pending entry applied.
func clearOutbox(t *testing.T, c *Catalog) {
	t.Helper()
	es, err := c.PendingOutbox(context.Background(), 0, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	for i := range es {
		es[i].MetaDone, es[i].IndexDone = true, true
	}
	if err := c.OutboxDone(context.Background(), es); err != nil {
		t.Fatal(err)
	}
}

// Open creates the catalog (and its directory); what was committed is there after a reopen.
func TestOpenCreatesAndReopens(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "new", "dir", "catalog.db")
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Path() != path {
		t.Fatalf("Path() = %q", c.Path())
	}
	if err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	addDoc(t, c, "a", "m", "a.txt")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c, err = Open(path) // the schema and migrations run again over an existing catalog
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := next(t, c, "a"); got != "m" {
		t.Fatalf("after reopen next = %q", got)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// Update commits only when fn returns nil: an error rolls back every statement of fn.
func TestUpdateRollsBackOnError(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := c.Update(ctx, func(tx *Tx) error {
		if _, err := tx.InsertDocument(ctx, DocRow{ID: "a", Type: "t", Size: 1, Version: 1}); err != nil {
			return err
		}
		if err := tx.SetMeta(ctx, "k", "v"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want fn's error", err)
	}
	if _, st, _ := c.Document(ctx, "a"); st != DocMissing {
		t.Fatal("a rolled-back insert is visible")
	}
	if _, ok, _ := c.Meta(ctx, "k"); ok {
		t.Fatal("a rolled-back meta write is visible")
	}
}

// Meta values: unset reads as not found; SetMeta overwrites; JSON and integer forms.
func TestMeta(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	if v, ok, err := c.Meta(ctx, "k"); err != nil || ok || v != "" {
		t.Fatalf("unset: %q %v %v", v, ok, err)
	}
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetMeta(ctx, "k", "one") })
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetMeta(ctx, "k", "two") })
	if v, ok, _ := c.Meta(ctx, "k"); !ok || v != "two" {
		t.Fatalf("Meta = %q %v, want two", v, ok)
	}
	type rec struct{ A int }
	if err := c.SetMetaJSON(ctx, "j", rec{A: 7}); err != nil {
		t.Fatal(err)
	}
	var r rec
	if ok, err := c.MetaJSON(ctx, "j", &r); err != nil || !ok || r.A != 7 {
		t.Fatalf("MetaJSON = %+v %v %v", r, ok, err)
	}
	if ok, err := c.MetaJSON(ctx, "unset", &r); err != nil || ok {
		t.Fatalf("MetaJSON of an unset key: %v %v", ok, err)
	}
	if ok, err := c.MetaJSON(ctx, "k", &r); err == nil || ok {
		t.Fatal("MetaJSON of a value that is not JSON succeeded")
	}
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetMeta(ctx, "n", "42") })
	for key, want := range map[string]int64{"n": 42, "unset": 0, "k": 0} {
		if got, err := c.MetaInt(ctx, key); err != nil || got != want {
			t.Errorf("MetaInt(%s) = %d, %v; want %d", key, got, err, want)
		}
	}
}
