package sqlitedb

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

func TestCacheSizerKiBFor(t *testing.T) {
	s := CacheSizer{MinKiB: 2 << 10, MaxKiB: 64 << 10, Share: 4}
	for _, c := range []struct{ db, want int64 }{
		{0, 2 << 10},
		{4 << 20, 2 << 10},            // 1 MiB wanted: the minimum stays
		{28 << 20, 8 << 10},           // 7 MiB, rounded up
		{64 << 20, 16 << 10},          // exactly a power of two
		{(64 << 20) + 4096, 32 << 10}, // just over it
		{290 << 20, 64 << 10},         // capped
		{40 << 30, 64 << 10},
	} {
		if got := s.KiBFor(c.db); got != c.want {
			t.Errorf("KiBFor(%d) = %d KiB, want %d", c.db, got, c.want)
		}
	}
	odd := CacheSizer{MinKiB: 16 << 10, MaxKiB: 40 << 10, Share: 16}
	if got := odd.KiBFor(10 << 30); got != 40<<10 {
		t.Errorf("a maximum that is no power of two times the minimum: %d KiB, want %d", got, 40<<10)
	}
}

// cacheKiB reads the cache setting of db's one connection.
func cacheKiB(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(`PRAGMA cache_size`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return -n
}

// adjustN runs n empty write transactions that call Adjust.
func adjustN(t *testing.T, db *sql.DB, s *CacheSizer, n int) {
	t.Helper()
	ctx := context.Background()
	for range n {
		tx, err := Begin(ctx, db, "BEGIN IMMEDIATE")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Adjust(ctx, tx); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

// The cache follows the database as it grows, and is set again on a connection that lost it.
func TestCacheSizerFollowsTheDatabase(t *testing.T) {
	db, ctx := openKV(t)
	s := &CacheSizer{MinKiB: 1 << 10, MaxKiB: 64 << 10, Share: 4}
	adjustN(t, db, s, 1)
	if got := cacheKiB(t, db); got != 1<<10 {
		t.Fatalf("cache of an empty database = %d KiB, want %d", got, 1<<10)
	}
	// About 12 MB: a quarter is 3 MiB, so 4 MiB.
	v := strings.Repeat("x", 6000)
	for i := range 2000 {
		if _, err := db.ExecContext(ctx, `INSERT INTO kv(k, v) VALUES(?, ?)`, i, v); err != nil {
			t.Fatal(err)
		}
	}
	adjustN(t, db, s, cacheCheckEvery-1)
	if got := cacheKiB(t, db); got != 1<<10 {
		t.Fatalf("cache changed between two checks: %d KiB", got)
	}
	adjustN(t, db, s, 1)
	if got := cacheKiB(t, db); got != 4<<10 {
		t.Fatalf("cache of a 12 MB database = %d KiB, want %d", got, 4<<10)
	}
	if _, err := db.Exec(`PRAGMA cache_size = -2000`); err != nil { // as a new connection has
		t.Fatal(err)
	}
	adjustN(t, db, s, cacheCheckEvery)
	if got := cacheKiB(t, db); got != 4<<10 {
		t.Fatalf("cache after the connection's setting was lost = %d KiB, want %d", got, 4<<10)
	}
}
