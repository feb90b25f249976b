package queue

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
)

// BenchmarkReapNothingExpired100k: one reaper pass over 100k live deadlines, 3 modules, none
// expired. Goal: < 5 ms per pass.
func BenchmarkReapNothingExpired100k(b *testing.B) {
	bd := setup(b)
	future := bd.serverNow(b) + 3600
	for i := 0; i < 100_000; i += 5000 {
		zs := make([]redis.Z, 0, 5000)
		for j := i; j < i+5000; j++ {
			item := fmt.Sprintf(`{"id":"%016x","_hi_job":"ab","_hi_attempt":1,"_hi_since":0}`, j)
			zs = append(zs, redis.Z{Score: future + float64(j)/1000, Member: protocol.TimeoutMember("m:run", item)})
		}
		if err := bd.rdb.ZAdd(bd.ctx, protocol.TimeoutsKey, zs...).Err(); err != nil {
			b.Fatal(err)
		}
	}
	opts := ReapOptions{Modules: []Module{{"a", "u"}, {"b", "u"}, {"c", ""}}}
	b.ResetTimer()
	for b.Loop() {
		res, err := bd.c.Reap(bd.ctx, opts)
		if err != nil || res.Expired != 0 {
			b.Fatalf("reap = %+v, %v", res, err)
		}
	}
}

// BenchmarkPush: one window refill of 64 items (build + one script call).
func BenchmarkPush(b *testing.B) {
	bd := setup(b)
	doc := docJSON("x")
	n := 0
	for b.Loop() {
		its := make([]Item, 64)
		for i := range its {
			id := fmt.Sprintf("%016x", n)
			n++
			its[i] = Item{ID: id, Document: []byte(`{"id":"` + id + `"` + string(doc[len(`{"id":"x"`):])), UID: "u", Token: protocol.NewToken()}
		}
		res, err := bd.c.Push(bd.ctx, "m", its, false)
		if err != nil || res.Pushed != 64 {
			b.Fatalf("push = %+v, %v", res, err)
		}
		if n%(64*256) == 0 { // keep Redis small
			bd.rdb.Del(bd.ctx, protocol.CheckKey("m"), protocol.JobsKey("m"))
		}
	}
}

// BenchmarkPipeline10k pushes 10k files through one no-op worker speaking the raw upstream
// protocol (check true, run, result), in one loop: through this package (Push windows of 64,
// NextDone, ParseDone, AckDone) versus a bare loop doing only the protocol's Redis calls. The
// difference is the price of dedup, job fields and the reliable done queue.
func BenchmarkPipeline10k(b *testing.B) {
	const files, window, m = 10_000, 64, "m"
	bd := setup(b)
	ctx := bd.ctx
	worker := func(item string) error {
		// check phase
		if err := rawTake(ctx, bd.rdb, protocol.CheckKey(m), item); err != nil {
			return err
		}
		if err := rawRelease(ctx, bd.rdb, protocol.CheckKey(m), item); err != nil {
			return err
		}
		if err := bd.rdb.RPush(ctx, protocol.RunKey(m), item).Err(); err != nil {
			return err
		}
		// run phase
		kv, err := bd.rdb.BLPop(ctx, time.Second, protocol.RunKey(m)).Result()
		if err != nil {
			return err
		}
		if err := rawTake(ctx, bd.rdb, protocol.RunKey(m), kv[1]); err != nil {
			return err
		}
		if err := rawRelease(ctx, bd.rdb, protocol.RunKey(m), kv[1]); err != nil {
			return err
		}
		return bd.rdb.RPush(ctx, protocol.DoneKey, `{"module": "m", "document": `+kv[1]+`}`).Err()
	}
	docs := make([]Item, files)
	for i := range docs {
		id := fmt.Sprintf("%016x", i)
		docs[i] = Item{ID: id, Document: []byte(`{"id":"` + id + `","paths":{"a/` + id + `.jpg":1.5}}`), UID: "u"}
	}
	b.Run("queue", func(b *testing.B) {
		for b.Loop() {
			next := 0
			for done := 0; done < files; {
				if w, err := bd.c.InFlight(ctx, m); err != nil {
					b.Fatal(err)
				} else if free := window - int(w); free > 0 && next < files {
					batch := docs[next:min(next+free, files)]
					for i := range batch {
						batch[i].Token = protocol.NewToken()
					}
					if _, err := bd.c.Push(ctx, m, batch, false); err != nil {
						b.Fatal(err)
					}
					next += len(batch)
				}
				item, err := bd.rdb.LPop(ctx, protocol.CheckKey(m)).Result()
				if err != nil {
					b.Fatal(err)
				}
				if err := worker(item); err != nil {
					b.Fatal(err)
				}
				raw, err := bd.c.NextDone(ctx, time.Second)
				if err != nil {
					b.Fatal(err)
				}
				msg, err := protocol.ParseDone([]byte(raw))
				if err != nil {
					b.Fatal(err)
				}
				ref, _ := RefOf(msg)
				if err := bd.c.AckDone(ctx, raw, &ref); err != nil {
					b.Fatal(err)
				}
				done++
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			for i := range files {
				if err := bd.rdb.RPush(ctx, protocol.CheckKey(m), string(docs[i].Document)).Err(); err != nil {
					b.Fatal(err)
				}
				item, err := bd.rdb.LPop(ctx, protocol.CheckKey(m)).Result()
				if err != nil {
					b.Fatal(err)
				}
				if err := worker(item); err != nil {
					b.Fatal(err)
				}
				if _, err := bd.rdb.LPop(ctx, protocol.DoneKey).Result(); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// rawTake is add_timeout; rawRelease is remove_timeout (the Python runtime's, docs/protocol.md).
func rawTake(ctx context.Context, rdb *redis.Client, q, item string) error {
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, protocol.TimeoutsKey, redis.Z{Score: float64(time.Now().Unix() + 60), Member: protocol.TimeoutMember(q, item)})
		p.RPush(ctx, q+":processing", item)
		return nil
	})
	return err
}

func rawRelease(ctx context.Context, rdb *redis.Client, q, item string) error {
	member := protocol.TimeoutMember(q, item)
	if err := rdb.ZScore(ctx, protocol.TimeoutsKey, member).Err(); err != nil {
		return err
	}
	if err := rdb.ZRem(ctx, protocol.TimeoutsKey, member).Err(); err != nil {
		return err
	}
	if err := rdb.LRem(ctx, q+":processing", 0, item).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	return nil
}
