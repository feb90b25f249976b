package catalog

import (
	"context"
	"fmt"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// BenchmarkRecordAtScale records new files as an initial sync does (a document, its path and
// their two outbox keys per file, 2,000 files a transaction, the outbox applier deleting each
// batch's keys after it) into a catalog that already holds 400k files, and reports the cost
// per file of the next 100k. "default" keeps SQLite's 2 MiB writer cache, "sized" is the
// catalog's own (sqlitedb.CacheSizer). Not in make bench: filling takes about a minute.
//
//	go test -run '^$' -bench RecordAtScale -benchtime 1x ./internal/catalog
func BenchmarkRecordAtScale(b *testing.B) {
	const base, measured, batch = 400_000, 100_000, 2_000
	for _, mode := range []string{"default", "sized"} {
		b.Run("cache="+mode, func(b *testing.B) {
			ctx := context.Background()
			c, err := Open(b.TempDir() + "/catalog.db")
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if mode == "default" {
				c.cache.MaxKiB = c.cache.MinKiB
			}
			next := 0
			record := func(n int) {
				for done := 0; done < n; done += batch {
					var seq int64
					err := c.Update(ctx, func(tx *Tx) error {
						for i := next; i < next+batch; i++ {
							id := fmt.Sprintf("%016x", xxhash.Sum64String(fmt.Sprint(i)))
							path := fmt.Sprintf("d%04d/f%07d.txt", i/1000, i)
							row := DocRow{ID: id, Type: "text/plain", Size: 1000, Version: 1, LocalPath: path}
							if _, err := tx.InsertDocument(ctx, row); err != nil {
								return err
							}
							f := File{Path: path, DocID: id, Dev: 1, Ino: uint64(i) + 1, Size: 1000, MtimeNs: int64(i), Mtime: float64(i)}
							if err := tx.PutFile(ctx, f); err != nil {
								return err
							}
							if err := tx.DirtyNew(ctx, row, f); err != nil {
								return err
							}
						}
						seq = tx.seq
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
					next += batch
					entries, err := c.PendingOutbox(ctx, seq-2*batch, 2*batch)
					if err != nil {
						b.Fatal(err)
					}
					for i := range entries {
						entries[i].MetaDone, entries[i].IndexDone = true, true
					}
					if err := c.OutboxDone(ctx, entries); err != nil {
						b.Fatal(err)
					}
				}
			}
			record(base)
			b.ResetTimer()
			for range b.N {
				record(measured)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*measured), "µs/file")
		})
	}
}
