package sqlitedb

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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

// TestTxExecConvertsAsDatabaseSQL: the arguments ExecContext hands the connection itself are
// the ones database/sql would hand it: named types as their kind (json.RawMessage as bytes,
// a string type as text, small ints as int64), driver.Valuer's value, nil pointers as NULL,
// sql.Named by name; a value it cannot convert is refused with the argument's position.
func TestTxExecConvertsAsDatabaseSQL(t *testing.T) {
	db := Open("file:" + t.TempDir() + "/conv.db")
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if _, err := db.Exec(`CREATE TABLE t(a, b, c, d, e, f, g)`); err != nil {
		t.Fatal(err)
	}
	type name string
	var nilInt *int
	args := []any{json.RawMessage(`{"x":1}`), name("n"), int32(7), uint8(3), sql.NullString{String: "v", Valid: true}, nilInt, 2.5}
	insert := `INSERT INTO t(a, b, c, d, e, f, g) VALUES (?, ?, ?, ?, ?, ?, ?)`
	// The reference: the same row through database/sql's own conversion.
	if _, err := db.ExecContext(ctx, insert, args...); err != nil {
		t.Fatal(err)
	}
	tx, err := Begin(ctx, db, "BEGIN")
	if err != nil {
		t.Fatal(err)
	}
	res, err := tx.ExecContext(ctx, insert, args...)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := res.LastInsertId(); err != nil || id != 2 {
		t.Fatalf("LastInsertId = %d, %v; want 2", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("RowsAffected = %d, %v; want 1", n, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE t SET g = :g WHERE rowid = :id`, sql.Named("g", "named"), sql.Named("id", 2)); err != nil {
		t.Fatal(err)
	}
	_, err = tx.ExecContext(ctx, insert, 1, 2, 3, 4, 5, 6, struct{}{})
	if err == nil || !strings.Contains(err.Error(), "$7") {
		t.Fatalf("an unconvertible seventh argument: %v, want an error naming $7", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(ctx, `SELECT typeof(a) || ':' || quote(a), typeof(b) || ':' || b, typeof(c) || ':' || c,
		typeof(d) || ':' || d, typeof(e) || ':' || e, typeof(f), typeof(g) || ':' || g FROM t ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got [][7]string
	for rows.Next() {
		var r [7]string
		if err := rows.Scan(&r[0], &r[1], &r[2], &r[3], &r[4], &r[5], &r[6]); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 2 {
		t.Fatalf("%d rows, want 2", len(got))
	}
	want := [7]string{`blob:X'7B2278223A317D'`, "text:n", "integer:7", "integer:3", "text:v", "null", "text:named"}
	if got[1] != want {
		t.Errorf("through Tx: %q, want %q", got[1], want)
	}
	want[6] = "real:2.5"
	if got[0] != want {
		t.Errorf("through database/sql: %q, want %q (the reference moved)", got[0], want)
	}
}

// BenchmarkTxExecWide: an index row's insert, 25 values, through Tx against database/sql's own
// Conn.ExecContext on the same connection pool, in the same run.
func BenchmarkTxExecWide(b *testing.B) {
	db := Open("file:" + b.TempDir() + "/wide.db")
	defer db.Close()
	db.SetMaxOpenConns(1)
	cols := make([]string, 25)
	marks := make([]string, 25)
	for i := range cols {
		cols[i], marks[i] = fmt.Sprintf("c%d", i), "?"
	}
	if _, err := db.Exec(`CREATE TABLE w(` + strings.Join(cols, ", ") + `)`); err != nil {
		b.Fatal(err)
	}
	insert := `INSERT INTO w VALUES (` + strings.Join(marks, ", ") + `)`
	args := make([]any, 25)
	for i := range args {
		switch i % 3 {
		case 0:
			args[i] = []byte(`{"f:size":3}`)
		case 1:
			args[i] = nil
		default:
			args[i] = int64(i)
		}
	}
	ctx := context.Background()
	b.Run("sqlitedb.Tx", func(b *testing.B) {
		tx, err := Begin(ctx, db, "BEGIN")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tx.ExecContext(ctx, insert, args...); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("sql.Conn", func(b *testing.B) {
		conn, err := db.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := conn.ExecContext(ctx, insert, args...); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			b.Fatal(err)
		}
	})
}
