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

// The pools' settings beyond SQLite's defaults: both checkpoint the write-ahead log at
// sqlitedb.WALCheckpointPages, not 1000 pages (whichever connection commits last runs the
// checkpoint); the writer keeps statement journals (and temporary tables) in memory, where a
// multi-row outbox statement would write its journal to a file past 64 KiB, and the readers
// keep SQLite's default, a file, for temporary tables as large as a drive.
func TestCatalogPoolSettings(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	pools := map[string]*sql.DB{"writer": c.w, "reader": c.r}
	for _, want := range []struct {
		pragma, pool string
		value        int
	}{
		{"wal_autocheckpoint", "writer", sqlitedb.WALCheckpointPages},
		{"wal_autocheckpoint", "reader", sqlitedb.WALCheckpointPages},
		{"temp_store", "writer", 2}, // MEMORY
		{"temp_store", "reader", 0}, // DEFAULT: a file
	} {
		var got int
		if err := pools[want.pool].QueryRow(`PRAGMA ` + want.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want.value {
			t.Errorf("%s: %s = %d, want %d", want.pool, want.pragma, got, want.value)
		}
	}
}
