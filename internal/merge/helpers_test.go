package merge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/metadata"
	"github.com/homeindex/homeindex/internal/outbox"
	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
)

// waitTimeout bounds every condition wait in these tests.
const waitTimeout = 15 * time.Second

// fixture is a merger over real parts: redis-server, catalog, metadata directory, outbox with
// the embedded index, all under one temp directory.
type fixture struct {
	t       testing.TB
	ctx     context.Context
	srv     *redistest.Server
	rdb     *redis.Client // seeding, raw-protocol workers and assertions
	q       *queue.Client
	cat     *catalog.Catalog
	store   *metadata.Store
	ob      *outbox.Applier
	base    string // everything the test writes is below it
	metaDir string
	m       *Merger
	logs    *lockedBuffer
	merged  chan [2]string // OnMerged calls
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{t: t, ctx: ctx, srv: redistest.Start(t), base: t.TempDir(), logs: &lockedBuffer{},
		merged: make(chan [2]string, 1024)}
	f.rdb = f.srv.Client()
	f.metaDir = filepath.Join(f.base, "metadata")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("merger log:\n%s", f.logs.String())
		}
	})
	log := zerolog.New(f.logs)
	var err error
	if f.q, err = queue.Connect(ctx, queue.Options{Endpoint: redisconn.Endpoint{Addr: f.srv.Addr()}, DialTimeout: time.Second}, log); err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = f.q.Close() })
	if f.cat, err = catalog.Open(filepath.Join(f.base, "state", "catalog.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.cat.Close() })
	if f.store, err = metadata.Open(f.metaDir); err != nil {
		t.Fatal(err)
	}
	index, err := search.OpenEmbedded(filepath.Join(f.base, "state", "search.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = index.Close() })
	f.ob = outbox.New(outbox.Config{Configure: func(ctx context.Context) error {
		return index.Chunks().Configure(ctx, search.Settings{Filterable: []string{"file_id", "module"}, Sortable: []string{"index"}})
	}}, f.cat, f.store, index, nil, log)
	if cfg.Pipeline == nil {
		cfg.Pipeline = []string{"m1", "m2"}
	}
	f.m = f.newMerger(cfg)
	return f
}

// newMerger builds a merger on the fixture's parts, as a daemon (re)start does.
func (f *fixture) newMerger(cfg Config) *Merger {
	if cfg.OnMerged == nil {
		cfg.OnMerged = func(id, module string) { f.merged <- [2]string{id, module} }
	}
	return New(cfg, f.q, f.cat, f.store, zerolog.New(f.logs))
}

// addDoc creates a live document with one path (on drive when drive is not "") whose `next`
// is next.
func (f *fixture) addDoc(id, path, drive, next string) {
	f.t.Helper()
	err := f.cat.Update(f.ctx, func(tx *catalog.Tx) error {
		if drive != "" {
			if err := tx.SetDrivePresent(f.ctx, drive, true); err != nil {
				return err
			}
		}
		if _, err := tx.InsertDocument(f.ctx, catalog.DocRow{ID: id, Type: "text/plain", Size: 5, Next: next, Version: 1}); err != nil {
			return err
		}
		if err := tx.PutFile(f.ctx, catalog.File{Path: path, DocID: id, Dev: 1, Ino: uint64(len(path)), Size: 5,
			MtimeNs: 1_700_000_000_500_000_000, Mtime: 1700000000.5, Drive: drive}); err != nil {
			return err
		}
		return tx.Dirty(f.ctx, catalog.DocKey(id), catalog.PathKey(path))
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// dispatch records a queued job for (id, module) with a new token and pushes its item, as
// the dispatcher does. It returns the item.
func (f *fixture) dispatch(id, module string) string {
	f.t.Helper()
	token := protocol.NewToken()
	now := time.Now()
	err := f.cat.Update(f.ctx, func(tx *catalog.Tx) error {
		return tx.PutJob(f.ctx, catalog.Job{DocID: id, Module: module, Token: token, Attempt: 1,
			State: catalog.JobQueued, Since: now, Updated: now})
	})
	if err != nil {
		f.t.Fatal(err)
	}
	docs, err := f.cat.ItemDocuments(f.ctx, []string{id})
	if err != nil || len(docs) != 1 {
		f.t.Fatalf("item document %s: %d documents, err %v", id, len(docs), err)
	}
	b, err := json.Marshal(docs[0])
	if err != nil {
		f.t.Fatal(err)
	}
	res, err := f.q.Push(f.ctx, module, []queue.Item{{ID: id, Document: b, Token: token, Since: now}}, false)
	if err != nil || res.Pushed != 1 {
		f.t.Fatalf("push %s/%s: %+v %v", id, module, res, err)
	}
	item, ok, err := f.q.JobItem(f.ctx, module, id)
	if err != nil || !ok {
		f.t.Fatalf("job item %s/%s: ok=%v err=%v", id, module, ok, err)
	}
	return item
}

// take is an upstream worker's check phase start (docs/protocol.md): LPOP
// <m>:check, then add_timeout (MULTI: ZADD timeouts, RPUSH <m>:check:processing).
func (f *fixture) take(module string) string {
	f.t.Helper()
	item, err := f.rdb.LPop(f.ctx, protocol.CheckKey(module)).Result()
	if err != nil {
		f.t.Fatalf("lpop %s: %v", protocol.CheckKey(module), err)
	}
	deadline := float64(time.Now().Add(time.Hour).UnixMicro()) / 1e6
	_, err = f.rdb.TxPipelined(f.ctx, func(p redis.Pipeliner) error {
		p.ZAdd(f.ctx, protocol.TimeoutsKey, redis.Z{Score: deadline, Member: protocol.TimeoutMember(protocol.CheckKey(module), item)})
		p.RPush(f.ctx, protocol.CheckProcessingKey(module), item)
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return item
}

// finish is the worker's end: remove_timeout (ZREM, LREM <m>:check:processing), then RPUSH
// modules:done payload.
func (f *fixture) finish(module, item, payload string) {
	f.t.Helper()
	if err := f.rdb.ZRem(f.ctx, protocol.TimeoutsKey, protocol.TimeoutMember(protocol.CheckKey(module), item)).Err(); err != nil {
		f.t.Fatal(err)
	}
	if err := f.rdb.LRem(f.ctx, protocol.CheckProcessingKey(module), 0, item).Err(); err != nil {
		f.t.Fatal(err)
	}
	f.pushDone(payload)
}

// work runs one job through a worker: take, then finish with payload(item).
func (f *fixture) work(module string, payload func(item string) string) string {
	f.t.Helper()
	item := f.take(module)
	p := payload(item)
	f.finish(module, item, p)
	return p
}

func (f *fixture) pushDone(payload string) {
	f.t.Helper()
	if err := f.rdb.RPush(f.ctx, protocol.DoneKey, payload).Err(); err != nil {
		f.t.Fatal(err)
	}
}

// handleNext takes the next result as Run does (NextDone) and handles it.
func (f *fixture) handleNext() error {
	f.t.Helper()
	raw, err := f.q.NextDone(f.ctx, time.Second)
	if err != nil {
		f.t.Fatalf("next done: %v", err)
	}
	return f.m.Handle(f.ctx, raw)
}

// mustHandleNext is handleNext that must succeed.
func (f *fixture) mustHandleNext() {
	f.t.Helper()
	if err := f.handleNext(); err != nil {
		f.t.Fatalf("handle: %v", err)
	}
}

func (f *fixture) llen(key string) int64 {
	f.t.Helper()
	n, err := f.rdb.LLen(f.ctx, key).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) doc(id string) protocol.Document {
	f.t.Helper()
	d, state, err := f.cat.Document(f.ctx, id)
	if err != nil || state != catalog.DocLive {
		f.t.Fatalf("document %s: state %v err %v", id, state, err)
	}
	return d
}

func (f *fixture) job(id, module string) (catalog.Job, bool) {
	f.t.Helper()
	j, ok, err := f.cat.Job(f.ctx, id, module)
	if err != nil {
		f.t.Fatal(err)
	}
	return j, ok
}

// outboxKeys lists the pending outbox keys.
func (f *fixture) outboxKeys() map[string]bool {
	f.t.Helper()
	es, err := f.cat.PendingOutbox(f.ctx, 0, 10000)
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range es {
		out[e.Key] = true
	}
	return out
}

func (f *fixture) drain() {
	f.t.Helper()
	res, err := f.ob.Drain(f.ctx)
	if err != nil || res.MetaFailed > 0 || res.IndexPending > 0 {
		f.t.Fatalf("outbox drain: %+v %v", res, err)
	}
}

func (f *fixture) readMeta(rel string) []byte {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.metaDir, rel))
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

func (f *fixture) quarantined() []queue.QuarantineRecord {
	f.t.Helper()
	recs, err := f.q.Quarantined(f.ctx, 1000)
	if err != nil {
		f.t.Fatal(err)
	}
	return recs
}

// lastQuarantined reads the newest quarantine record only (records may be megabytes).
func (f *fixture) lastQuarantined() queue.QuarantineRecord {
	f.t.Helper()
	raw, err := f.rdb.LIndex(f.ctx, protocol.QuarantineKey, -1).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	var rec queue.QuarantineRecord
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		f.t.Fatal(err)
	}
	return rec
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

// withFields adds top-level members (`"k":v,...`) to a JSON object.
func withFields(obj, members string) string {
	if members == "" {
		return obj
	}
	if strings.TrimSpace(obj) == "{}" {
		return "{" + members + "}"
	}
	return obj[:len(obj)-1] + "," + members + "}"
}

// result is a Go SDK-style done message: {"module":m,"document":item+extra,"content":c}.
func result(module, item, extra, content string) string {
	s := `{"module":` + quote(module) + `,"document":` + withFields(item, extra)
	if content != "" {
		s += `,"content":` + content
	}
	return s + "}"
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// pyDumps re-serializes JSON as Python's json.dumps does by default: ", " and ": "
// separators, keys in their order.
func pyDumps(t testing.TB, js string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	var b strings.Builder
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case json.Delim:
			open, end := string(v), "}"
			if v == '[' {
				end = "]"
			}
			b.WriteString(open)
			for i := 0; dec.More(); i++ {
				if i > 0 {
					b.WriteString(", ")
				}
				if v == '{' {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					b.WriteString(quote(k.(string)) + ": ")
				}
				if err := walk(); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			b.WriteString(end)
		case string:
			b.WriteString(quote(v))
		case json.Number:
			b.WriteString(v.String())
		case bool:
			fmt.Fprint(&b, v)
		case nil:
			b.WriteString("null")
		}
		return nil
	}
	if err := walk(); err != nil {
		t.Fatalf("pyDumps: %v", err)
	}
	return b.String()
}

// treeSnapshot lists every file and directory below root with its size, mode and content
// hash-free summary (size and mtime), to compare before and after.
func treeSnapshot(t testing.TB, root string, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for _, s := range skip {
			if rel == s {
				return filepath.SkipDir
			}
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[rel] = fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffTrees(before, after map[string]string) []string {
	var d []string
	for k, v := range after {
		if before[k] != v {
			d = append(d, fmt.Sprintf("%s: %q → %q", k, before[k], v))
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			d = append(d, k+": removed")
		}
	}
	return d
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

var _ io.Writer = (*lockedBuffer)(nil)

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// count returns how many log lines contain s.
func (l *lockedBuffer) count(s string) int {
	return strings.Count(l.String(), s)
}

var errCrash = errors.New("simulated crash")
