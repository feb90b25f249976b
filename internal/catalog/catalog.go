// Package catalog is the daemon's system of record: one SQLite database (modernc.org/sqlite, WAL)
// holding files, documents, drives and the outbox of pending writes to derived stores (metadata
// directory, search index). Everything in Redis, on the metadata directory and in the index can be
// rebuilt from it. Every change is one transaction; callers batch.
package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/homeindex/homeindex/internal/sqlitedb"
)

// Catalog is an open catalog database. Writes go through one connection (SQLite has one writer);
// reads use a small pool that WAL lets run beside the writer.
type Catalog struct {
	w    *sql.DB
	r    *sql.DB
	path string
	// cache sizes the writer's page cache: a quarter of the catalog, which is about the share
	// of its three indexes keyed by content hash (documents' ids, files by document, the
	// outbox's document keys), from SQLite's default 2 MiB up to 64 MiB (a 1M-file catalog
	// is about 290 MB). With the default alone, a 1M-file initial sync spent about 46 s in
	// the catalog's pread and pwrite, against under 1 s at 100k.
	cache sqlitedb.CacheSizer
	// handoff carries created documents from the transactions that wrote them to the outbox
	// applier (handoff.go).
	handoff handoff
}

// Open opens (creating if needed) the catalog at path and migrates its schema.
func Open(path string) (*Catalog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	w, err := openDB(path, true)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(schema); err != nil {
		w.Close()
		return nil, fmt.Errorf("open catalog %s: migrate: %w", path, err)
	}
	if err := migrateMissing(w); err != nil {
		w.Close()
		return nil, fmt.Errorf("open catalog %s: migrate missing_since: %w", path, err)
	}
	if err := migrateTables(w); err != nil {
		w.Close()
		return nil, fmt.Errorf("open catalog %s: migrate tables: %w", path, err)
	}
	r, err := openDB(path, false)
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(4)
	return &Catalog{w: w, r: r, path: path, cache: sqlitedb.CacheSizer{MinKiB: 2 << 10, MaxKiB: 64 << 10, Share: 4}}, nil
}

// openDB builds the DSN. WAL with synchronous=NORMAL: a commit survives a crash of the process
// (kill -9) at any instant; a power loss may roll back the last commits, never corrupt the file.
// That matches the rest of the system (Redis with AOF everysec loses up to a second too) and
// every such loss self-heals: a rolled-back sync is redone by the next walk, a rolled-back merge
// leaves a job row whose token Redis no longer has, which the dispatcher's audit forgets and
// dispatches again. FULL cost an fsync per merge: 474 vs 720 files/s end to end.
func openDB(path string, writer bool) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", sqlitedb.WALCheckpointPragma)
	if writer {
		q.Set("_txlock", "immediate")
		// A statement that writes several rows (flushDirty's 32 outbox rows) inside a
		// transaction keeps a statement journal of the pages it changes, and SQLite spills one
		// past 64 KiB to a file in the system's temporary directory: in a first sync of 100k
		// files, 124k page writes (512 MB) to /var/tmp. In memory it is bounded by one
		// statement's pages. Readers keep files: their temporary tables (SELECT DISTINCT over
		// a drive's files) can be as large as the library.
		q.Add("_pragma", "temp_store(MEMORY)")
	}
	db := sqlitedb.Open("file:" + path + "?" + q.Encode())
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open catalog %s: %w", path, err)
	}
	return db, nil
}

// Path is the database file's path.
func (c *Catalog) Path() string { return c.path }

// Close closes both pools.
func (c *Catalog) Close() error {
	return errors.Join(c.r.Close(), c.w.Close())
}

// Ping checks the database answers (readiness).
func (c *Catalog) Ping(ctx context.Context) error {
	var one int
	return c.r.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Update runs fn in one write transaction, committed if fn returns nil.
func (c *Catalog) Update(ctx context.Context, fn func(*Tx) error) error {
	// Short statements only (sqlitedb.Tx): a cancellation ends the transaction at the next one.
	sqlTx, err := sqlitedb.Begin(ctx, c.w, "BEGIN IMMEDIATE")
	if err != nil {
		return fmt.Errorf("catalog: begin: %w", err)
	}
	defer sqlTx.Rollback() // after a panic in fn too; nothing once committed
	if err := c.cache.Adjust(ctx, sqlTx); err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	tx := &Tx{tx: sqlTx}
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.flushDirty(ctx); err != nil {
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("catalog: commit: %w", err)
	}
	c.handoff.publish(&tx.handing)
	return nil
}

// Tx is a write transaction.
type Tx struct {
	tx      *sqlitedb.Tx
	seq     int64
	dirtied []any   // key, seq, index_done of each dirtied key, for flushDirty
	handing handing // documents for the applier (DirtyNew)
}
