package sqlitedb

import (
	"context"
	"fmt"
)

// CacheSizer grows a writer connection's page cache with its database, within bounds.
//
// Why: an index keyed by a content hash takes every insert on a random leaf. Once the leaves
// outgrow the cache, each transaction spills dirty pages to the WAL and reads them back, so the
// cost per insert climbs with the database's size (the catalog's figures are in its Catalog
// type). A fixed large cache would hold memory a small database never needs; this one follows
// the database and stops at MaxKiB.
//
// Adjust must be called with the writer's connection held (inside its transaction), which
// also serializes the calls.
type CacheSizer struct {
	MinKiB, MaxKiB int64
	Share          int64 // the cache wanted is 1/Share of the database
	writes         int64
}

// cacheCheckEvery is how many transactions pass between two looks at the database's size.
const cacheCheckEvery = 64

// KiBFor is the cache for a database of dbBytes: its share, rounded up to a power of two times
// MinKiB (so that a growing database changes it rarely), within [MinKiB, MaxKiB].
func (s *CacheSizer) KiBFor(dbBytes int64) int64 {
	want := dbBytes / s.Share / 1024
	kib := s.MinKiB
	for kib < want && kib < s.MaxKiB {
		kib *= 2
	}
	return min(kib, s.MaxKiB)
}

// Adjust sets the connection's cache for the database's current size, on the first call and
// every cacheCheckEvery after. It reads the setting back rather than remembering it: the pool
// may have replaced the connection since.
func (s *CacheSizer) Adjust(ctx context.Context, tx *Tx) error {
	s.writes++
	if s.writes%cacheCheckEvery != 1 {
		return nil
	}
	var pages, pageSize, cache int64
	err := tx.QueryRowContext(ctx, `SELECT p.page_count, s.page_size, c.cache_size
		FROM pragma_page_count() p, pragma_page_size() s, pragma_cache_size() c`).Scan(&pages, &pageSize, &cache)
	if err != nil {
		return fmt.Errorf("cache size: %w", err)
	}
	want := s.KiBFor(pages * pageSize)
	if cache == -want {
		return nil
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = %d", -want)); err != nil {
		return fmt.Errorf("cache size: %w", err)
	}
	return nil
}
