package reaper_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/internal/reaper"
	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/internal/testutil/wait"
	"github.com/homeindex/homeindex/protocol"
)

// now retries at once (no backoff), so attempts follow each other within a test.
var now = queue.RetryPolicy{Base: -1}

// bundle is a Reaper over a real redis-server and a real catalog.
type bundle struct {
	t   *testing.T
	ctx context.Context
	rdb *redis.Client
	q   *queue.Client
	cat *catalog.Catalog
	r   *reaper.Reaper
}

// setup builds a Reaper for module "m" (uid "u") in the chain m → n.
func setup(t *testing.T, cfg reaper.Config) *bundle {
	t.Helper()
	srv := redistest.Start(t)
	b := &bundle{t: t, ctx: context.Background(), rdb: srv.Client()}
	log := zerolog.New(zerolog.NewTestWriter(t))
	var err error
	var opts queue.Options // fields set one by one: the endpoint's fields may be promoted ones
	opts.Addr, opts.DialTimeout = srv.Addr(), time.Second
	if b.q, err = queue.Connect(b.ctx, opts, log); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.q.Close() })
	if b.cat, err = catalog.Open(filepath.Join(t.TempDir(), "catalog.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.cat.Close() })
	if cfg.Modules == nil {
		cfg.Modules = []queue.Module{{Name: "m", UID: "u"}}
	}
	if cfg.Pipeline == nil {
		cfg.Pipeline = []string{"m", "n"}
	}
	b.r = reaper.New(cfg, b.q, b.cat, log)
	return b
}

// dispatch records a document due for m with a queued job in the catalog and pushes its item,
// built for uid, to m:check, as the dispatcher does. It returns the job's token.
func (b *bundle) dispatch(id, uid string) string {
	b.t.Helper()
	token := protocol.NewToken()
	err := b.cat.Update(b.ctx, func(t *catalog.Tx) error {
		if _, err := t.InsertDocument(b.ctx, catalog.DocRow{ID: id, Type: "text/plain", Size: 1, Next: "m", Version: protocol.CurrentVersion}); err != nil {
			return err
		}
		if err := t.PutFile(b.ctx, catalog.File{Path: id + ".txt", DocID: id, Dev: 1, Ino: 1, Size: 1, MtimeNs: 1, Mtime: 1}); err != nil {
			return err
		}
		return t.PutJob(b.ctx, catalog.Job{DocID: id, Module: "m", Token: token, Attempt: 1, State: catalog.JobQueued,
			Since: time.Now(), Updated: time.Now()})
	})
	if err != nil {
		b.t.Fatal(err)
	}
	doc := json.RawMessage(fmt.Sprintf(`{"id":%q,"paths":{"%s.txt":1},"next":"m"}`, id, id))
	res, err := b.q.Push(b.ctx, "m", []queue.Item{{ID: id, Document: doc, UID: uid, Token: token}}, false)
	if err != nil || res.Pushed != 1 {
		b.t.Fatalf("push: %+v, %v", res, err)
	}
	return token
}

// takeExpired is a worker that takes the head of m:check as upstream's runtime does (LPOP,
// then ZADD timeouts + RPUSH processing) with a deadline already behind the Redis clock, and
// then dies. It returns the item taken.
func (b *bundle) takeExpired() string {
	b.t.Helper()
	item, err := b.rdb.LPop(b.ctx, protocol.CheckKey("m")).Result()
	if err != nil {
		b.t.Fatalf("take from m:check: %v", err)
	}
	srvNow, err := b.rdb.Time(b.ctx).Result()
	if err != nil {
		b.t.Fatal(err)
	}
	deadline := float64(srvNow.UnixMicro())/1e6 - 1
	if _, err := b.rdb.TxPipelined(b.ctx, func(p redis.Pipeliner) error {
		p.ZAdd(b.ctx, protocol.TimeoutsKey, redis.Z{Score: deadline, Member: protocol.TimeoutMember(protocol.CheckKey("m"), item)})
		p.RPush(b.ctx, protocol.CheckProcessingKey("m"), item)
		return nil
	}); err != nil {
		b.t.Fatal(err)
	}
	return item
}

func (b *bundle) pass() {
	b.t.Helper()
	if err := b.r.Pass(b.ctx); err != nil {
		b.t.Fatalf("pass: %v", err)
	}
}

// checkItems returns the items waiting in m:check, head first.
func (b *bundle) checkItems() []protocol.ItemInfo {
	b.t.Helper()
	raws, err := b.rdb.LRange(b.ctx, protocol.CheckKey("m"), 0, -1).Result()
	if err != nil {
		b.t.Fatal(err)
	}
	var out []protocol.ItemInfo
	for _, r := range raws {
		info, err := protocol.ParseItem(r)
		if err != nil {
			b.t.Fatal(err)
		}
		out = append(out, info)
	}
	return out
}

func (b *bundle) job(id string) (catalog.Job, bool) {
	b.t.Helper()
	j, ok, err := b.cat.Job(b.ctx, id, "m")
	if err != nil {
		b.t.Fatal(err)
	}
	return j, ok
}

// A job whose worker died past its deadline is put back at the head of its queue as its next
// attempt, with the same token; the catalog's job stays queued.
func TestTimedOutJobIsRequeued(t *testing.T) {
	t.Parallel()
	b := setup(t, reaper.Config{Policy: now})
	token := b.dispatch("a", "u")
	b.dispatch("b", "u")
	b.takeExpired()
	b.pass()
	if st := b.r.Stats(); st.Passes != 1 || st.Requeued != 1 || st.Parked != 0 || st.Dropped != 0 {
		t.Fatalf("stats %+v", st)
	}
	items := b.checkItems()
	if len(items) != 2 || items[0].ID != "a" || items[0].Job.Attempt != 2 || items[0].Job.Token != token {
		t.Fatalf("m:check = %+v, want a's attempt 2 at the head", items)
	}
	if n, _ := b.rdb.LLen(b.ctx, protocol.CheckProcessingKey("m")).Result(); n != 0 {
		t.Fatalf("processing holds %d items", n)
	}
	if j, ok := b.job("a"); !ok || j.State != catalog.JobQueued || j.Token != token {
		t.Fatalf("catalog job %+v, %v", j, ok)
	}
}

// A requeue waits for its backoff in the retry set and is promoted to the head of its queue
// by a later pass once the backoff ended.
func TestRetryWaitsForBackoffThenIsPromoted(t *testing.T) {
	t.Parallel()
	b := setup(t, reaper.Config{Policy: queue.RetryPolicy{Base: 30 * time.Millisecond, Max: 30 * time.Millisecond}})
	b.dispatch("a", "u")
	b.takeExpired()
	b.pass()
	if st := b.r.Stats(); st.Retrying != 1 || st.Requeued != 0 {
		t.Fatalf("stats %+v, want the next attempt waiting", st)
	}
	if items := b.checkItems(); len(items) != 0 {
		t.Fatalf("m:check = %+v during the backoff", items)
	}
	wait.For(t, "the retry promoted", func() bool {
		b.pass()
		return b.r.Stats().Promoted == 1
	})
	if items := b.checkItems(); len(items) != 1 || items[0].ID != "a" || items[0].Job.Attempt != 2 {
		t.Fatalf("m:check = %+v", items)
	}
}

// A job that times out MaxAttempts times is parked: Redis keeps it in m:failed, the catalog
// records the failure on the document, the job row is parked with the reason, the document
// moves on down the chain.
func TestJobParkedAfterItsLastAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t, reaper.Config{Policy: queue.RetryPolicy{MaxAttempts: 2, Base: -1}})
	token := b.dispatch("a", "u")
	b.takeExpired()
	b.pass()
	b.takeExpired()
	b.pass()
	if st := b.r.Stats(); st.Requeued != 1 || st.Parked != 1 {
		t.Fatalf("stats %+v", st)
	}
	const reason = "timed out in check (attempt 2)"
	j, ok := b.job("a")
	if !ok || j.State != catalog.JobParked || j.Attempt != 2 || j.Reason != reason || j.Token != token {
		t.Fatalf("catalog job %+v, %v", j, ok)
	}
	d, _, err := b.cat.Document(b.ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if d.Next != "n" || !strings.Contains(string(d.Failures), `"m"`) || !strings.Contains(string(d.Failures), reason) {
		t.Fatalf("document next %q failures %s", d.Next, d.Failures)
	}
	failed, err := b.q.Failed(b.ctx, "m", 0)
	if err != nil || len(failed) != 1 || failed[0].ID != "a" || failed[0].Attempts != 2 {
		t.Fatalf("m:failed = %+v, %v", failed, err)
	}
	if items := b.checkItems(); len(items) != 0 {
		t.Fatalf("m:check = %+v after parking", items)
	}
}

// An item built for an old module uid is dropped: the catalog forgets its queued job (the
// dispatcher sends it again with the current uid).
func TestStaleItemIsDroppedAndItsJobForgotten(t *testing.T) {
	t.Parallel()
	b := setup(t, reaper.Config{Policy: now})
	b.dispatch("old", "u0")
	b.takeExpired()
	b.pass()
	if st := b.r.Stats(); st.Dropped != 1 || st.Requeued != 0 {
		t.Fatalf("stats %+v", st)
	}
	if j, ok := b.job("old"); ok {
		t.Fatalf("catalog still has the dropped job: %+v", j)
	}
}

// A worker that took an item and died before it set a deadline leaves an orphan in the
// processing list: the sweep requeues it once the grace period passed.
func TestSweepRequeuesOrphans(t *testing.T) {
	t.Parallel()
	b := setup(t, reaper.Config{Policy: now, Grace: 50 * time.Millisecond})
	b.dispatch("a", "u")
	if err := b.rdb.LMove(b.ctx, protocol.CheckKey("m"), protocol.CheckProcessingKey("m"), "LEFT", "RIGHT").Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	wait.For(t, "the orphan requeued", func() bool {
		if err := b.r.Sweep(b.ctx); err != nil {
			t.Fatal(err)
		}
		return b.r.Stats().Orphans == 1
	})
	if time.Since(start) < 50*time.Millisecond {
		t.Fatalf("requeued after %v, before the grace period", time.Since(start))
	}
	if items := b.checkItems(); len(items) != 1 || items[0].ID != "a" || items[0].Job.Attempt != 2 {
		t.Fatalf("m:check = %+v", items)
	}
}

// Run passes every Interval until its context ends, then returns nil.
func TestRunReapsEveryInterval(t *testing.T) {
	t.Parallel()
	b := setup(t, reaper.Config{Policy: now, Interval: 10 * time.Millisecond})
	b.dispatch("a", "u")
	b.takeExpired()
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- b.r.Run(ctx) }()
	wait.For(t, "Run's passes", func() bool { st := b.r.Stats(); return st.Requeued == 1 && st.Passes >= 2 })
	cancel()
	wait.Returned(t, "Run", done)
	if items := b.checkItems(); len(items) != 1 || items[0].Job.Attempt != 2 {
		t.Fatalf("m:check = %+v", items)
	}
}
