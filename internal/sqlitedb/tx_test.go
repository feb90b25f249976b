package sqlitedb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/testutil/wait"
)

// TestTxCommitsAndRollsBack: a committed transaction's rows stay, a rolled back one's do not,
// and the one connection of the pool serves the next transaction either way.
func TestTxCommitsAndRollsBack(t *testing.T) {
	db, ctx := openKV(t)
	for i, commit := range []bool{true, false, true} {
		tx, err := Begin(ctx, db, "BEGIN IMMEDIATE")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO kv(k, v) VALUES(?, 'x')`, i); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); !errors.Is(err, sql.ErrTxDone) {
			t.Fatalf("Rollback after the end: %v, want ErrTxDone", err)
		}
	}
	if got := countKV(t, db); got != 2 {
		t.Fatalf("%d rows, want 2 (the rolled back insert gone)", got)
	}
}

// TestTxStopsAtTheNextStatementOnceCancelled: a cancelled context stops the transaction's
// next statement with its error; rolling back then leaves nothing and frees the connection.
func TestTxStopsAtTheNextStatementOnceCancelled(t *testing.T) {
	db, _ := openKV(t)
	ctx, cancel := context.WithCancel(context.Background())
	tx, err := Begin(ctx, db, "BEGIN IMMEDIATE")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO kv(k, v) VALUES(1, 'x')`); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := tx.ExecContext(ctx, `INSERT INTO kv(k, v) VALUES(2, 'x')`); !errors.Is(err, context.Canceled) {
		t.Fatalf("Exec after cancel: %v, want context.Canceled", err)
	}
	if _, err := tx.QueryContext(ctx, `SELECT v FROM kv`); !errors.Is(err, context.Canceled) {
		t.Fatalf("Query after cancel: %v, want context.Canceled", err)
	}
	var v string
	if err := tx.QueryRowContext(ctx, `SELECT v FROM kv WHERE k = 1`).Scan(&v); !errors.Is(err, context.Canceled) {
		t.Fatalf("QueryRow after cancel: %v, want context.Canceled", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := countKV(t, db); got != 0 {
		t.Fatalf("%d rows after the rollback, want 0", got)
	}
}

// TestTxFailedCommitRollsBack: a COMMIT that fails (a deferred foreign key still broken)
// leaves SQLite's transaction open; Commit rolls it back, so the pool's connection begins
// the next one cleanly.
func TestTxFailedCommitRollsBack(t *testing.T) {
	db, ctx := openOne(t)
	for _, q := range []string{`PRAGMA foreign_keys = ON`, `CREATE TABLE p(id INTEGER PRIMARY KEY)`,
		`CREATE TABLE c(id INTEGER PRIMARY KEY, p INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := Begin(ctx, db, "BEGIN")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO c(id, p) VALUES(1, 99)`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err == nil {
		t.Fatal("Commit with a broken deferred foreign key succeeded")
	}
	tx, err = Begin(ctx, db, "BEGIN")
	if err != nil {
		t.Fatalf("Begin after a failed commit: %v", err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM c`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows of c = %d, %v; want 0 (the failed transaction rolled back)", n, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestTxStartsNoGoroutinePerStatement: rows open in a Tx under a cancellable context have no
// goroutine watching them, where a sql.Tx starts one per query (what Tx exists to avoid).
func TestTxStartsNoGoroutinePerStatement(t *testing.T) {
	db, _ := openKV(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	running := func() int {
		var b bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
			t.Fatal(err)
		}
		return strings.Count(b.String(), "created by database/sql.(*Rows).initContextClose")
	}
	watchers := func(query func() (*sql.Rows, error)) int {
		rows, err := query()
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		return running()
	}
	stx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := watchers(func() (*sql.Rows, error) { return stx.QueryContext(ctx, `SELECT k FROM kv`) }); n == 0 {
		t.Fatal("sql.Tx: no goroutine watches its rows (the check itself is off)")
	}
	if err := stx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// Closing the rows cancels the watcher but does not wait for it to return: a dump taken
	// too soon would count it against Tx (CI saw exactly that once).
	wait.For(t, "the sql.Tx rows' watcher to return", func() bool { return running() == 0 })
	tx, err := Begin(ctx, db, "BEGIN")
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if n := watchers(func() (*sql.Rows, error) { return tx.QueryContext(ctx, `SELECT k FROM kv`) }); n != 0 {
		t.Fatalf("Tx: %d goroutines watch its rows, want 0", n)
	}
}

// BenchmarkTxStatement: an insert and a point query in a transaction under a cancellable
// context, through database/sql's Tx and through Tx.
func BenchmarkTxStatement(b *testing.B) {
	db := Open("file:" + b.TempDir() + "/kv.db")
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type tx interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
		QueryRowContext(context.Context, string, ...any) *sql.Row
		Commit() error
	}
	for _, c := range []struct {
		name  string
		begin func() (tx, error)
	}{
		{"sql.Tx", func() (tx, error) { return db.BeginTx(ctx, nil) }},
		{"sqlitedb.Tx", func() (tx, error) { return Begin(ctx, db, "BEGIN") }},
	} {
		b.Run(c.name, func(b *testing.B) {
			t, err := c.begin()
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				if _, err := t.ExecContext(ctx, `INSERT OR REPLACE INTO kv(k, v) VALUES(?, 'x')`, i%1000); err != nil {
					b.Fatal(err)
				}
				var v string
				if err := t.QueryRowContext(ctx, `SELECT v FROM kv WHERE k = ?`, i%1000).Scan(&v); err != nil {
					b.Fatal(err)
				}
			}
			if err := t.Commit(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

func countKV(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM kv`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
