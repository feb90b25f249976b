package merge

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/protocol"
)

// BenchmarkMerge measures small results taken from modules:done and merged one by one (the
// catalog commits each with synchronous=FULL): NextDone, the scan, ParseDone, content.json
// (an atomic write: fsync of the file and its directory), Merge, AckDone.
func BenchmarkMerge(b *testing.B) {
	b.Run("content", func(b *testing.B) { benchMerge(b, `"a few words of content"`) })
	b.Run("fields-only", func(b *testing.B) { benchMerge(b, "") })
}

func benchMerge(b *testing.B, content string) {
	merged := 0
	f := newFixture(b, Config{OnMerged: func(string, string) { merged++ }}) // the fixture's channel would fill up
	ids := make([]string, b.N)
	now := time.Now()
	items := make([]queue.Item, b.N)
	err := f.cat.Update(f.ctx, func(tx *catalog.Tx) error {
		for i := range ids {
			id := fmt.Sprintf("%016x", i+1)
			ids[i] = id
			path := "bench/" + id + ".txt"
			if _, err := tx.InsertDocument(f.ctx, catalog.DocRow{ID: id, Type: "text/plain", Size: 5, Next: "m1", Version: 1}); err != nil {
				return err
			}
			if err := tx.PutFile(f.ctx, catalog.File{Path: path, DocID: id, Ino: uint64(i + 1), Size: 5, Mtime: 1700000000.5}); err != nil {
				return err
			}
			token := protocol.NewToken()
			if err := tx.PutJob(f.ctx, catalog.Job{DocID: id, Module: "m1", Token: token, Attempt: 1, State: catalog.JobQueued, Since: now, Updated: now}); err != nil {
				return err
			}
			doc := fmt.Sprintf(`{"id":%q,"paths":{%q:1700000000.5},"next":"m1"}`, id, path)
			items[i] = queue.Item{ID: id, Document: []byte(doc), Token: token, Since: now}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.q.Push(f.ctx, "m1", items, false); err != nil {
		b.Fatal(err)
	}
	_, err = f.rdb.Pipelined(f.ctx, func(p redis.Pipeliner) error {
		for _, id := range ids {
			item, _, err := f.q.JobItem(f.ctx, "m1", id)
			if err != nil {
				return err
			}
			p.RPush(f.ctx, protocol.DoneKey, result("m1", item, `"title":"a small result","lang":"en"`, content))
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		raw, err := f.q.NextDone(f.ctx, time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.m.Handle(f.ctx, raw); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "merges/s")
	if s := f.m.Stats(); s.Merged != int64(b.N) || merged != b.N {
		b.Fatalf("stats %+v", s)
	}
}
