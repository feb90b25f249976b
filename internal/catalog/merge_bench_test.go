package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// BenchmarkMergeBatch merges results in batches of 36 (about what the merger takes per
// transaction from a fast module) into a catalog of 20k documents, each with a job in flight:
// the catalog's CPU per merged result, without Redis or files.
func BenchmarkMergeBatch(b *testing.B) {
	ctx := context.Background()
	c, err := Open(b.TempDir() + "/catalog.db")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const docs, batch = 20_000, 36
	now := time.Unix(1_700_000_000, 0)
	tokens := make([]string, docs)
	if err := c.Update(ctx, func(tx *Tx) error {
		for i := range docs {
			id := fmt.Sprintf("%016x", i)
			tokens[i] = fmt.Sprintf("%032x", i)
			if _, err := tx.InsertDocument(ctx, DocRow{ID: id, Type: "text/plain", Size: 1, Next: "m1", Version: 1}); err != nil {
				return err
			}
			if err := tx.PutFile(ctx, File{Path: "f/" + id, DocID: id, Dev: 1, Ino: uint64(i) + 1, Size: 1, MtimeNs: 1, Mtime: 1}); err != nil {
				return err
			}
			if err := tx.PutJob(ctx, Job{DocID: id, Module: "m1", Token: tokens[i], Attempt: 1, State: JobQueued, Since: now, Updated: now}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	fields := map[string]json.RawMessage{"noop": json.RawMessage("true")}
	next := 0
	b.ResetTimer()
	for b.Loop() {
		if next+batch > docs {
			b.StopTimer()
			next = 0
			if err := c.Update(ctx, func(tx *Tx) error { // jobs in flight again
				for i := range docs {
					if err := tx.PutJob(ctx, Job{DocID: fmt.Sprintf("%016x", i), Module: "m1", Token: tokens[i] + "x", Attempt: 1, State: JobQueued, Since: now, Updated: now}); err != nil {
						return err
					}
					tokens[i] += "x"
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		ins := make([]MergeInput, batch)
		for j := range ins {
			i := next + j
			ins[j] = MergeInput{DocID: fmt.Sprintf("%016x", i), Module: "m1", Token: tokens[i], Fields: fields, Pipeline: []string{"m1"}, At: now}
		}
		next += batch
		outs, err := c.MergeBatch(ctx, ins)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range outs {
			if o != MergeApplied {
				b.Fatalf("outcome %v", o)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*batch), "µs/result")
}
