package catalog

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/homeindex/homeindex/internal/sqlitedb"
)

// olderCatalog makes a catalog, lets fill write to it, then turns it into one an older version
// made by running stmts on it, and returns its path.
func olderCatalog(t *testing.T, fill func(*Catalog), stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalog.db")
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if fill != nil {
		fill(c)
	}
	c.Close()
	db := sqlitedb.Open("file:" + path)
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// A catalog whose merges table kept a row per merged result gets one row per document and
// module: the latest merge's token (a replay of it is still a replay), and the count.
func TestMigrateMergesToPairs(t *testing.T) {
	path := olderCatalog(t, func(c *Catalog) { addDoc(t, c, "a", "m2", "a.txt") },
		`DROP TABLE merges`,
		`CREATE TABLE merges (doc_id TEXT NOT NULL, module TEXT NOT NULL, token TEXT NOT NULL, at INTEGER NOT NULL,
			PRIMARY KEY (doc_id, module, token))`,
		`INSERT INTO merges VALUES ('a', 'm1', 'later', 200), ('a', 'm1', 'first', 100), ('b', 'm1', 'only', 50)`,
	)
	for range 2 { // the second open finds the table migrated
		c, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for _, want := range []struct {
			id, module string
			n          int
		}{{"a", "m1", 2}, {"b", "m1", 1}, {"a", "m2", 0}} {
			if n, err := c.MergeCount(ctx, want.id, want.module); err != nil || n != want.n {
				t.Errorf("MergeCount(%s, %s) = %d, %v; want %d", want.id, want.module, n, err, want.n)
			}
		}
		outs, err := c.MergeBatch(ctx, []MergeInput{mergeInput("a", "m1", "later", `{"x": 1}`), mergeInput("a", "m1", "first", `{"x": 1}`)})
		if err != nil || !slices.Equal(outs, []MergeOutcome{MergeReplayed, MergeStale}) {
			t.Errorf("after migration: %v, %v; want replayed, stale", outs, err)
		}
		var withoutRowid int
		if err := c.r.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'merges' AND sql LIKE '%WITHOUT ROWID'`).Scan(&withoutRowid); err != nil || withoutRowid != 1 {
			t.Errorf("merges is not the WITHOUT ROWID table (%d, %v)", withoutRowid, err)
		}
		c.Close()
	}
}

// A catalog whose outbox was a rowid table gets the WITHOUT ROWID one, its rows and its seq
// index kept.
func TestMigrateOutboxWithoutRowid(t *testing.T) {
	path := olderCatalog(t, nil,
		`DROP TABLE outbox`,
		`CREATE TABLE outbox (key TEXT PRIMARY KEY, seq INTEGER NOT NULL, meta_done INTEGER NOT NULL DEFAULT 0, index_done INTEGER NOT NULL DEFAULT 0)`,
		`CREATE INDEX outbox_seq ON outbox(seq)`,
		`INSERT INTO outbox VALUES ('doc:b', 7, 1, 0), ('doc:a', 9, 0, 0)`,
	)
	for range 2 {
		c, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.PendingOutbox(context.Background(), 0, 10)
		if err != nil || len(got) != 2 || got[0] != (OutboxEntry{Key: "doc:b", Seq: 7, MetaDone: true}) || got[1] != (OutboxEntry{Key: "doc:a", Seq: 9}) {
			t.Errorf("outbox after migration: %+v, %v", got, err)
		}
		var n int
		if err := c.r.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE (name = 'outbox' AND sql LIKE '%WITHOUT ROWID') OR name = 'outbox_pending'`).Scan(&n); err != nil || n != 2 {
			t.Errorf("outbox layout: %d of 2 (%v)", n, err)
		}
		if err := c.r.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'outbox'`).Scan(&n); err != nil || n != 1 {
			t.Errorf("outbox has %d indexes (%v), want outbox_pending alone", n, err)
		}
		c.Close()
	}
}

// A catalog made with the outbox's former index (seq alone) gets outbox_pending in its place.
func TestOutboxSeqIndexReplaced(t *testing.T) {
	path := olderCatalog(t, nil, `DROP INDEX outbox_pending`, `CREATE INDEX outbox_seq ON outbox(seq)`)
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var names []string
	rows, err := c.r.Query(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'outbox'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if len(names) != 1 || names[0] != "outbox_pending" {
		t.Errorf("outbox indexes %q, want outbox_pending alone", names)
	}
}
