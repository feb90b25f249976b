package catalog

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkOutbox100k passes the outbox keys of a first sync of 100k files (a doc: and a
// path: key each) through it as the sync and the applier do: dirtied 1,000 files a
// transaction, read back a round at a time, recorded done (deleted) 5,000 at a time. It
// reports the time per key of each step.
//
//	go test -run '^$' -bench Outbox100k -benchtime 1x ./internal/catalog
func BenchmarkOutbox100k(b *testing.B) {
	ctx := context.Background()
	const files, batch = 100_000, 1000
	for range b.N {
		c, err := Open(b.TempDir() + "/catalog.db")
		if err != nil {
			b.Fatal(err)
		}
		var dirty, pending, done time.Duration
		var unrecorded []OutboxEntry
		var after int64
		for next := 0; next < files; next += batch {
			t := time.Now()
			err := c.Update(ctx, func(tx *Tx) error {
				for i := next; i < next+batch; i++ {
					id := fmt.Sprintf("%016x", uint64(i)*0x9E3779B97F4A7C15)
					path := fmt.Sprintf("d%04d/f%07d.txt", i/1000, i)
					if err := tx.DirtyNew(ctx, DocRow{ID: id, LocalPath: path}, File{Path: path, DocID: id}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			dirty += time.Since(t)
			t = time.Now()
			entries, err := c.PendingOutbox(ctx, after, 2*batch)
			if err != nil || len(entries) != 2*batch {
				b.Fatalf("pending: %d entries, %v", len(entries), err)
			}
			pending += time.Since(t)
			after = entries[len(entries)-1].Seq
			for i := range entries {
				entries[i].MetaDone, entries[i].IndexDone = true, true
			}
			if unrecorded = append(unrecorded, entries...); len(unrecorded) >= 5000 {
				t = time.Now()
				if err := c.OutboxDone(ctx, unrecorded); err != nil {
					b.Fatal(err)
				}
				done += time.Since(t)
				// The outbox is empty again, and seqs start over (Tx.dirty).
				unrecorded, after = nil, 0
			}
		}
		c.Close()
		keys := float64(2 * files)
		b.ReportMetric(float64(dirty.Nanoseconds())/keys, "dirty-ns/key")
		b.ReportMetric(float64(pending.Nanoseconds())/keys, "pending-ns/key")
		b.ReportMetric(float64(done.Nanoseconds())/keys, "done-ns/key")
	}
}
