package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/sqlitedb"
)

// writerCacheKiB reads the cache setting of the writer's one connection.
func writerCacheKiB(t *testing.T, c *Catalog) int64 {
	t.Helper()
	var n int64
	if err := c.w.QueryRow(`PRAGMA cache_size`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return -n
}

// The writer's cache follows the catalog's size as write transactions go by (sqlitedb.CacheSizer).
func TestWriterCacheGrowsWithTheCatalog(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	update(t, c, func(context.Context, *Tx) error { return nil })
	if got := writerCacheKiB(t, c); got != 2<<10 {
		t.Fatalf("cache of an empty catalog = %d KiB, want %d", got, 2<<10)
	}
	// About 40 MB of documents: a quarter is 10 MiB, so 16 MiB.
	fields := map[string]json.RawMessage{"text": json.RawMessage(`"` + strings.Repeat("x", 8000) + `"`)}
	for b := range 10 {
		update(t, c, func(ctx context.Context, tx *Tx) error {
			for i := range 500 {
				if _, err := tx.InsertDocument(ctx, DocRow{ID: fmt.Sprintf("%d-%d", b, i), Type: "text/plain", Size: 1, Fields: fields, Version: 1}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for range 64 { // sqlitedb.CacheSizer looks every 64 transactions
		update(t, c, func(context.Context, *Tx) error { return nil })
	}
	if got := writerCacheKiB(t, c); got != 16<<10 {
		t.Fatalf("cache of a %d MB catalog = %d KiB, want %d", dbBytes(t, c)>>20, got, 16<<10)
	}
	// A new writer connection starts at SQLite's default; the next check sets it again.
	if _, err := c.w.Exec(`PRAGMA cache_size = -2000`); err != nil {
		t.Fatal(err)
	}
	for range 64 { // sqlitedb.CacheSizer looks every 64 transactions
		update(t, c, func(context.Context, *Tx) error { return nil })
	}
	if got := writerCacheKiB(t, c); got != 16<<10 {
		t.Fatalf("cache after the connection's setting was lost = %d KiB, want %d", got, 16<<10)
	}
}

func dbBytes(t *testing.T, c *Catalog) int64 {
	t.Helper()
	var n int64
	if err := c.r.QueryRow(`SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Both pools checkpoint the write-ahead log at sqlitedb.WALCheckpointPages, not
// SQLite's 1000 pages: whichever connection commits last runs the checkpoint.
func TestCatalogCheckpointsAtTheSharedLogSize(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	for name, db := range map[string]*sql.DB{"writer": c.w, "reader": c.r} {
		var pages int
		if err := db.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if pages != sqlitedb.WALCheckpointPages {
			t.Errorf("%s: wal_autocheckpoint = %d, want %d", name, pages, sqlitedb.WALCheckpointPages)
		}
	}
}

// The writer keeps statement journals (and temporary tables) in memory: a multi-row outbox
// statement otherwise writes its journal to a file in the temporary directory once it passes
// 64 KiB. Readers keep SQLite's default, a file, for temporary tables as large as a drive.
func TestCatalogWriterKeepsStatementJournalsInMemory(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	for _, pool := range []struct {
		name string
		db   *sql.DB
		want int // 2 MEMORY, 0 DEFAULT (a file)
	}{{"writer", c.w, 2}, {"reader", c.r, 0}} {
		var store int
		if err := pool.db.QueryRow(`PRAGMA temp_store`).Scan(&store); err != nil {
			t.Fatal(err)
		}
		if store != pool.want {
			t.Errorf("%s: temp_store = %d, want %d", pool.name, store, pool.want)
		}
	}
}
