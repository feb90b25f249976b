package sqlitedb

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// TestStatementsAreReused: the same SQL is prepared once per connection.
func TestStatementsAreReused(t *testing.T) {
	db, ctx := openKV(t)
	for i := 0; i < 100; i++ {
		if _, err := db.ExecContext(ctx, `INSERT INTO kv(k, v) VALUES(?, ?)`, i, "x"); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM kv WHERE k <= ?`, i).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("count = %d, %v; want %d", n, err, i+1)
		}
	}
	c := rawConn(t, db)
	if len(c.stmts) != 3 {
		t.Fatalf("cache holds %d statements, want 3 (one per SQL text)", len(c.stmts))
	}
}

// TestNestedSameQuery: running a query again while its rows are open gets its own statement,
// so neither result set is disturbed.
func TestNestedSameQuery(t *testing.T) {
	db, ctx := openKV(t)
	for i := 0; i < 5; i++ {
		if _, err := db.ExecContext(ctx, `INSERT INTO kv(k, v) VALUES(?, ?)`, i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	const q = `SELECT k, v FROM kv WHERE k >= ? ORDER BY k`
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	outer, err := tx.QueryContext(ctx, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	var seen []int
	for outer.Next() {
		var k int
		var v string
		if err := outer.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		seen = append(seen, k)
		var inner int
		if err := tx.QueryRowContext(ctx, q, k).Scan(&inner, &v); err != nil || inner != k || v != fmt.Sprint("v", k) {
			t.Fatalf("nested query at %d = %d %q, %v", k, inner, v, err)
		}
	}
	if err := outer.Err(); err != nil {
		t.Fatal(err)
	}
	outer.Close()
	if fmt.Sprint(seen) != "[0 1 2 3 4]" {
		t.Fatalf("outer rows %v, want [0 1 2 3 4]", seen)
	}
}

// TestCacheIsBounded: queries with varying placeholders stop being cached at maxCached and
// still run.
func TestCacheIsBounded(t *testing.T) {
	db, ctx := openOne(t)
	for i := 0; i < maxCached+20; i++ {
		var n int
		if err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT ? + %d`, i), 1).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("query %d = %d, %v", i, n, err)
		}
	}
	if c := rawConn(t, db); len(c.stmts) != maxCached {
		t.Fatalf("cache holds %d statements, want %d", len(c.stmts), maxCached)
	}
}

// TestErrorsKeepTheStatementUsable: a failed execution (constraint) leaves the cached
// statement usable.
func TestErrorsKeepTheStatementUsable(t *testing.T) {
	db, ctx := openKV(t)
	const ins = `INSERT INTO kv(k, v) VALUES(?, ?)`
	if _, err := db.ExecContext(ctx, ins, 1, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, ins, 1, "b"); err == nil {
		t.Fatal("duplicate key accepted")
	}
	if _, err := db.ExecContext(ctx, ins, 2, "c"); err != nil {
		t.Fatalf("statement unusable after an error: %v", err)
	}
}

// rawConn returns db's only connection's wrapper.
func rawConn(t *testing.T, db *sql.DB) *conn {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got *conn
	if err := c.Raw(func(dc any) error { got = dc.(*conn); return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

// openOne opens a database in a temp dir on one connection (so its statement cache is the one
// the test looks at), closed when the test ends.
func openOne(t *testing.T) (*sql.DB, context.Context) {
	t.Helper()
	db := Open("file:" + filepath.Join(t.TempDir(), "t.db"))
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	return db, context.Background()
}

// openKV is openOne with a table kv(k INTEGER PRIMARY KEY, v TEXT).
func openKV(t *testing.T) (*sql.DB, context.Context) {
	t.Helper()
	db, ctx := openOne(t)
	if _, err := db.ExecContext(ctx, `CREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	return db, ctx
}
