package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// waitTimeout bounds every condition wait in these tests.
const waitTimeout = 10 * time.Second

type bundle struct {
	ctx context.Context
	srv *redistest.Server
	rdb *redis.Client // assertions and raw-protocol workers
	c   *Client
}

func setup(t testing.TB, opts ...redistest.Option) *bundle {
	t.Helper()
	srv := redistest.Start(t, opts...)
	ctx := context.Background()
	c, err := Connect(ctx, Options{Endpoint: redisconn.Endpoint{Addr: srv.Addr()}, DialTimeout: time.Second}, zerolog.New(zerolog.NewTestWriter(t)))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &bundle{ctx: ctx, srv: srv, rdb: srv.Client(), c: c}
}

func docJSON(id string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"id":%q,"paths":{"drive/%s.jpg":1700000000.5},"next":"m"}`, id, id))
}

func newItem(id, uid string) Item {
	return Item{ID: id, Document: docJSON(id), UID: uid, Token: protocol.NewToken()}
}

func items(uid string, ids ...string) []Item {
	out := make([]Item, len(ids))
	for i, id := range ids {
		out[i] = newItem(id, uid)
	}
	return out
}

func (b *bundle) push(t testing.TB, module string, front bool, its ...Item) {
	t.Helper()
	res, err := b.c.Push(b.ctx, module, its, front)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pushed != len(its) {
		t.Fatalf("pushed %d of %d (skipped %v)", res.Pushed, len(its), res.Skipped)
	}
}

// ids returns the document ids of a list's items, head first.
func (b *bundle) ids(t testing.TB, key string) []string {
	t.Helper()
	raws, err := b.rdb.LRange(b.ctx, key, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, r := range raws {
		info, err := protocol.ParseItem(r)
		if err != nil {
			t.Fatalf("%s holds %q: %v", key, r, err)
		}
		out = append(out, info.ID)
	}
	return out
}

func (b *bundle) llen(t testing.TB, key string) int64 {
	t.Helper()
	n, err := b.rdb.LLen(b.ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (b *bundle) serverNow(t testing.TB) float64 {
	t.Helper()
	now, err := b.rdb.Time(b.ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	return float64(now.UnixMicro()) / 1e6
}

func (b *bundle) jobItem(t testing.TB, module, id string) (string, bool) {
	t.Helper()
	s, ok, err := b.c.JobItem(b.ctx, module, id)
	if err != nil {
		t.Fatal(err)
	}
	return s, ok
}

func mustInfo(t testing.TB, item string) protocol.ItemInfo {
	t.Helper()
	info, err := protocol.ParseItem(item)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// waitFor polls cond until it holds or waitTimeout passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// pyWorker speaks the upstream Python runtime's protocol (docs/protocol.md)
// with raw Redis commands: what run_server.py does, step by step.
type pyWorker struct {
	t       testing.TB
	rdb     *redis.Client
	module  string
	timeout float64 // TIMEOUT seconds; the deadline is computed on the worker's clock
	// clock returns the worker's time.time(); nil means the local clock.
	clock func() float64
}

func (w *pyWorker) now() float64 {
	if w.clock != nil {
		return w.clock()
	}
	return float64(time.Now().UnixMicro()) / 1e6
}

// addTimeout is add_timeout: MULTI; ZADD timeouts {member: now+TIMEOUT}; RPUSH <q>:processing.
func (w *pyWorker) addTimeout(ctx context.Context, q, item string) {
	w.t.Helper()
	_, err := w.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, protocol.TimeoutsKey, redis.Z{Score: w.now() + w.timeout, Member: protocol.TimeoutMember(q, item)})
		p.RPush(ctx, q+":processing", item)
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// removeTimeout is remove_timeout: false if the deadline passed (left to the reaper) or the
// member is gone (reaped); else ZREM then LREM <q>:processing 0.
func (w *pyWorker) removeTimeout(ctx context.Context, q, item string) bool {
	w.t.Helper()
	member := protocol.TimeoutMember(q, item)
	score, err := w.rdb.ZScore(ctx, protocol.TimeoutsKey, member).Result()
	if errors.Is(err, redis.Nil) {
		return false
	}
	if err != nil {
		w.t.Fatal(err)
	}
	if score < w.now() {
		return false
	}
	if err := w.rdb.ZRem(ctx, protocol.TimeoutsKey, member).Err(); err != nil {
		w.t.Fatal(err)
	}
	if err := w.rdb.LRem(ctx, q+":processing", 0, item).Err(); err != nil {
		w.t.Fatal(err)
	}
	return true
}

// takeCheck is process_check up to check_fn: LPOP <m>:check, then add_timeout. "" when empty.
func (w *pyWorker) takeCheck(ctx context.Context) string {
	w.t.Helper()
	item, err := w.rdb.LPop(ctx, protocol.CheckKey(w.module)).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	if err != nil {
		w.t.Fatal(err)
	}
	w.addTimeout(ctx, protocol.CheckKey(w.module), item)
	return item
}

// finishCheck is the end of process_check: remove_timeout, then RPUSH <m>:run (check true) or
// RPUSH modules:done {"module", "document"}.
func (w *pyWorker) finishCheck(ctx context.Context, item string, run bool) bool {
	w.t.Helper()
	if !w.removeTimeout(ctx, protocol.CheckKey(w.module), item) {
		return false
	}
	var err error
	if run {
		err = w.rdb.RPush(ctx, protocol.RunKey(w.module), item).Err()
	} else {
		err = w.rdb.RPush(ctx, protocol.DoneKey, w.done(item, "")).Err()
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return true
}

// takeRun is process_run up to run_fn: BLPOP <m>:run 1 (the BLMOVE call always fails
// upstream), then add_timeout. "" when nothing came.
func (w *pyWorker) takeRun(ctx context.Context) string {
	w.t.Helper()
	kv, err := w.rdb.BLPop(ctx, time.Second, protocol.RunKey(w.module)).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	if err != nil {
		w.t.Fatal(err)
	}
	w.addTimeout(ctx, protocol.RunKey(w.module), kv[1])
	return kv[1]
}

// finishRun is the end of process_run: remove_timeout, then RPUSH modules:done.
func (w *pyWorker) finishRun(ctx context.Context, item, content string) bool {
	w.t.Helper()
	if !w.removeTimeout(ctx, protocol.RunKey(w.module), item) {
		return false
	}
	if err := w.rdb.RPush(ctx, protocol.DoneKey, w.done(item, content)).Err(); err != nil {
		w.t.Fatal(err)
	}
	return true
}

// done builds {"module": m, "document": <the item, re-serialized as Python does>, "content"}.
func (w *pyWorker) done(item, content string) string {
	var doc map[string]any
	if err := json.Unmarshal([]byte(item), &doc); err != nil {
		w.t.Fatal(err)
	}
	doc["note"] = "hello"
	b, _ := json.Marshal(doc)
	msg := `{"module": ` + strconv.Quote(w.module) + `, "document": ` + string(b)
	if content != "" {
		msg += `, "content": ` + strconv.Quote(content)
	}
	return msg + "}"
}
