package catalog

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkPurgeMissing purges 100 expired missing documents from catalogs of 10k and 100k
// documents: through documents_missing the time per purge follows the 100 purged, not the
// collection (compare the two sizes' ns/op).
func BenchmarkPurgeMissing(b *testing.B) {
	for _, total := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("docs=%d", total), func(b *testing.B) {
			ctx := context.Background()
			c, err := Open(b.TempDir() + "/catalog.db")
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			t0 := time.Unix(1_700_000_000, 0)
			fill := func(from, n int, missing bool) {
				if err := c.Update(ctx, func(tx *Tx) error {
					for i := from; i < from+n; i++ {
						id := fmt.Sprintf("%016x", i)
						if _, err := tx.InsertDocument(ctx, DocRow{ID: id, Type: "text/plain", Size: 1, Version: 1}); err != nil {
							return err
						}
						if missing {
							if err := tx.SetMissing(ctx, id, t0); err != nil {
								return err
							}
							continue
						}
						if err := tx.PutFile(ctx, File{Path: "f/" + id, DocID: id, Dev: 1, Ino: uint64(i) + 1, Size: 1, MtimeNs: 1, Mtime: 1}); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			fill(0, total, false)
			next := total
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				fill(next, 100, true)
				next += 100
				b.StartTimer()
				ids, err := c.PurgeMissing(ctx, t0.Add(time.Hour), 500)
				if err != nil || len(ids) != 100 {
					b.Fatalf("purged %d: %v", len(ids), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/purged")
		})
	}
}
