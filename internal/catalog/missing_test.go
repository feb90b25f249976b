package catalog

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/sqlitedb"
	"github.com/homeindex/homeindex/internal/testutil/sqlplan"
)

// Expired missing documents are purged in bounded batches, found through documents_missing;
// live ones, recent ones and ones that got a path back are left alone.
func TestPurgeMissing(t *testing.T) {
	c := openTest(t)
	ctx := context.Background()
	t0 := time.Unix(1_700_000_000, 0)
	for i := range 7 {
		addDoc(t, c, fmt.Sprintf("old%d", i), "")
	}
	addDoc(t, c, "recent", "")
	addDoc(t, c, "live", "", "live.txt")
	addDoc(t, c, "back", "", "back.txt")
	err := c.Update(ctx, func(tx *Tx) error {
		for i := range 7 {
			if err := tx.SetMissing(ctx, fmt.Sprintf("old%d", i), t0); err != nil {
				return err
			}
		}
		if err := tx.SetMissing(ctx, "recent", t0.Add(time.Hour)); err != nil {
			return err
		}
		if err := tx.SetMissing(ctx, "back", t0); err != nil {
			return err
		}
		return tx.SetRetired(ctx, "back", false) // its content came back: no longer missing
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := c.CountMissing(ctx); n != 8 {
		t.Fatalf("missing %d, want 8", n)
	}
	before := t0.Add(time.Minute)
	var purged []string
	for {
		ids, err := c.PurgeMissing(ctx, before, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) > 3 {
			t.Fatalf("batch of %d, limit 3", len(ids))
		}
		purged = append(purged, ids...)
		if len(ids) < 3 {
			break
		}
	}
	if len(purged) != 7 || strings.Contains(strings.Join(purged, ","), "recent") {
		t.Fatalf("purged %v", purged)
	}
	for _, id := range []string{"recent", "live", "back"} {
		if _, st, _ := c.Document(ctx, id); st == DocMissing {
			t.Errorf("%s purged", id)
		}
	}
	if n, _ := c.MetaInt(ctx, MetaMissingPurged); n != 7 {
		t.Errorf("purged total %d", n)
	}
	// Each purged id is dirtied: the outbox removes its by-id directory.
	keys := map[string]bool{}
	es, err := c.PendingOutbox(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		keys[e.Key] = true
	}
	for _, id := range purged {
		if !keys[DocKey(id)] {
			t.Errorf("%s not dirtied", id)
		}
	}
	// The purge query uses the partial index: its cost follows the expired rows, not the table.
	plan := strings.Join(sqlplan.Of(t, c.r, `SELECT id FROM documents WHERE missing_since IS NOT NULL AND missing_since < ?
		AND NOT EXISTS (SELECT 1 FROM files f WHERE f.doc_id = documents.id) ORDER BY missing_since LIMIT ?`, 1, 1), "\n")
	if !strings.Contains(plan, "documents_missing") {
		t.Errorf("purge plan does not use documents_missing:\n%s", plan)
	}
}

// A catalog made before missing_since gets the column; its retired documents count as
// missing from the migration on.
func TestMigrateMissingSince(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	db := sqlitedb.Open("file:" + path)
	if _, err := db.Exec(schema); err != nil { // the schema without missing_since
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO documents(id, type, size, version, retired) VALUES ('r', 't', 1, 1, 1), ('l', 't', 1, 1, 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, err := c.CountMissing(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("missing after migration: %d %v", n, err)
	}
}

// SetMissing keeps the first missing-since time; MissingSince reports it with the document's
// path count; a document back (SetRetired false) is no longer missing.
func TestSetMissingKeepsTheFirstTime(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "")
	addDoc(t, c, "b", "", "b.txt")
	update(t, c, func(ctx context.Context, tx *Tx) error {
		if err := tx.SetMissing(ctx, "a", timeT0); err != nil {
			return err
		}
		return tx.SetMissing(ctx, "a", timeT0.Add(time.Hour))
	})
	var got []string
	if err := c.MissingSince(ctx, func(id string, since time.Time, paths int) error {
		got = append(got, fmt.Sprint(id, " ", since.Unix(), " ", paths))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{fmt.Sprint("a ", timeT0.Unix(), " 0")}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("MissingSince = %v, want %v", got, want)
	}
	update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetRetired(ctx, "a", false) })
	if n, _ := c.CountMissing(ctx); n != 0 {
		t.Fatalf("CountMissing = %d after the document came back", n)
	}
}

// The operator's confirmation is recorded once and taken by the transaction that uses it.
func TestMissingConfirmation(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	take := func() bool {
		var ok bool
		update(t, c, func(ctx context.Context, tx *Tx) error {
			var err error
			ok, err = tx.TakeMissingConfirm(ctx)
			return err
		})
		return ok
	}
	if take() {
		t.Fatal("a confirmation taken before any was given")
	}
	if err := c.ConfirmMissing(ctx, timeT0); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := c.Meta(ctx, MetaMissingConfirm); !ok || v != timeT0.UTC().Format(time.RFC3339) {
		t.Fatalf("confirmation %q %v", v, ok)
	}
	if !take() || take() {
		t.Fatal("the confirmation is not taken exactly once")
	}
}

// PathCounts counts each document's paths, in chunks for long lists; ids with none are absent.
func TestPathCounts(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	addDoc(t, c, "a", "", "a1", "a2", "a3")
	addDoc(t, c, "b", "", "b1")
	addDoc(t, c, "none", "")
	ids := []string{"a", "b", "none"}
	for i := range 6000 {
		ids = append(ids, fmt.Sprint("x", i))
	}
	got, err := c.PathCounts(ctx, ids)
	if err != nil || len(got) != 2 || got["a"] != 3 || got["b"] != 1 {
		t.Fatalf("PathCounts = %v, %v", got, err)
	}
}
