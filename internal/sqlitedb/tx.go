package sqlitedb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// Tx is a transaction of short statements, run on one connection of the pool with BEGIN and
// COMMIT of its own rather than database/sql's Tx.
//
// The reason is cost. For every statement whose context can be cancelled, modernc.org/sqlite
// starts a goroutine that waits to interrupt it, and database/sql starts another for every
// query in a sql.Tx (whose own context always can be): together about 1.4 µs a statement,
// against 1.8 µs for the statement itself (BenchmarkTxStatement). A module hop runs about 25.
// Here the caller's context is checked before each statement instead, and the statement runs
// with a context that cannot be cancelled, so neither goroutine starts: a cancellation stops
// the transaction at the next statement, not inside one, which for statements that touch a
// few rows is no later.
//
// Statements that may run long (a whole-table rebuild, CREATE INDEX, a search a client may
// give up on) belong in a sql.Tx or on the pool, where they can be interrupted.
type Tx struct {
	conn  *sql.Conn
	quiet context.Context // the caller's, without its cancellation
	done  bool
	args  []driver.NamedValue // ExecContext's arguments, reused from statement to statement
}

// Begin starts a transaction on a connection of db with begin ("BEGIN", "BEGIN IMMEDIATE").
// It must end with Commit or Rollback, which give the connection back.
func Begin(ctx context.Context, db *sql.DB, begin string) (*Tx, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	t := &Tx{conn: conn, quiet: context.WithoutCancel(ctx)}
	if _, err := conn.ExecContext(t.quiet, begin); err != nil {
		t.release(err)
		return nil, err
	}
	return t, nil
}

// ExecContext runs one statement, unless ctx has ended.
//
// It hands the arguments to the connection itself (sql.Conn.Raw), converted as database/sql
// converts them for a driver without a NamedValueChecker (driver.DefaultParameterConverter,
// sql.Named's name kept), into a slice the transaction reuses. database/sql would allocate a
// new slice of named values for every statement: a first sync's bulk inserts (an index row of
// 25 values per file, catalog statements of 32 rows of 9) made that 12% of its allocations.
func (t *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := t.usable(ctx); err != nil {
		return nil, err
	}
	named := t.args[:0]
	for i, a := range args {
		nv := driver.NamedValue{Ordinal: i + 1, Value: a}
		if na, ok := a.(sql.NamedArg); ok {
			nv.Name, nv.Value = na.Name, na.Value
		}
		v, err := driver.DefaultParameterConverter.ConvertValue(nv.Value)
		if err != nil {
			return nil, fmt.Errorf("sql: converting argument %s type: %w", describeArg(nv), err)
		}
		nv.Value = v
		named = append(named, nv)
	}
	t.args = named
	var res driver.Result
	err := t.conn.Raw(func(dc any) error {
		ec, ok := dc.(driver.ExecerContext)
		if !ok {
			return driver.ErrSkip
		}
		var err error
		res, err = ec.ExecContext(t.quiet, query, named)
		return err
	})
	clear(named) // no reference to the caller's values outlives the statement
	if errors.Is(err, driver.ErrSkip) {
		// Not this package's connection: database/sql's own path (it prepares the statement).
		return t.conn.ExecContext(t.quiet, query, args...)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// describeArg names an argument as database/sql's conversion error does.
func describeArg(nv driver.NamedValue) string {
	if nv.Name != "" {
		return fmt.Sprintf("%q", nv.Name)
	}
	return fmt.Sprintf("$%d", nv.Ordinal)
}

// QueryContext runs one query, unless ctx has ended.
func (t *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := t.usable(ctx); err != nil {
		return nil, err
	}
	return t.conn.QueryContext(t.quiet, query, args...)
}

// QueryRowContext runs one query for one row, unless ctx has ended (then Scan says so).
func (t *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if t.usable(ctx) != nil {
		return t.conn.QueryRowContext(ctx, query, args...) // gives ctx's error, or ErrConnDone
	}
	return t.conn.QueryRowContext(t.quiet, query, args...)
}

func (t *Tx) usable(ctx context.Context) error {
	if t.done {
		return sql.ErrTxDone
	}
	return ctx.Err()
}

// Commit commits, or rolls back when the commit fails, and gives the connection back.
func (t *Tx) Commit() error {
	if t.done {
		return sql.ErrTxDone
	}
	_, err := t.conn.ExecContext(t.quiet, "COMMIT")
	if err != nil {
		_, rbErr := t.conn.ExecContext(t.quiet, "ROLLBACK")
		t.release(rbErr)
		return err
	}
	t.release(nil)
	return nil
}

// Rollback rolls back and gives the connection back. Rolling back an ended transaction does
// nothing (so it can be deferred).
func (t *Tx) Rollback() error {
	if t.done {
		return sql.ErrTxDone
	}
	_, err := t.conn.ExecContext(t.quiet, "ROLLBACK")
	t.release(err)
	return err
}

// release gives the connection back to the pool, or closes it when the transaction could
// not be ended: a connection left inside a transaction must not serve anyone else.
func (t *Tx) release(endErr error) {
	t.done = true
	if endErr != nil {
		_ = t.conn.Raw(func(any) error { return driver.ErrBadConn }) // the pool drops it
	}
	_ = t.conn.Close()
}
