package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
	"github.com/redis/go-redis/v9"
)

// waitFor bounds every condition a test waits on.
const waitFor = 15 * time.Second

// testEnv is one redis-server plus temporary files and metadata roots.
type testEnv struct {
	t     *testing.T
	srv   *redistest.Server
	rdb   *redis.Client
	ctx   context.Context
	files string
	meta  string
	logs  *logBuffer
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	srv := redistest.Start(t)
	dir := t.TempDir()
	return &testEnv{t: t, srv: srv, rdb: srv.Client(), ctx: context.Background(),
		files: filepath.Join(dir, "files"), meta: filepath.Join(dir, "metadata"), logs: &logBuffer{t: t}}
}

// config is a worker configuration for module m with short durations.
func (e *testEnv) config(m string) Config {
	return Config{
		Module:      m,
		UID:         "uid-" + m,
		Redis:       redisconn.Endpoint{Addr: e.srv.Addr()},
		Timeout:     5 * time.Second,
		UIDRetry:    time.Second,
		MetadataDir: e.meta,
		FilesDir:    e.files,
		Log:         e.logs,
	}
}

// running is a worker serving in the background.
type running struct {
	w      *Worker
	cancel context.CancelFunc
	done   chan error
}

// serve starts a worker; it is stopped at cleanup if the test did not stop it.
func (e *testEnv) serve(cfg Config, h Handler) *running {
	e.t.Helper()
	w, err := NewWorker(cfg, h)
	if err != nil {
		e.t.Fatalf("NewWorker: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{w: w, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- w.Serve(ctx) }()
	e.t.Cleanup(func() { r.stop(e.t) })
	return r
}

// stop cancels the worker and waits for Serve to return.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return err
	case <-time.After(waitFor):
		t.Fatalf("Serve did not return within %v of its context ending", waitFor)
		return nil
	}
}

// file writes a file under the files root and returns its id (a stand-in for the hash).
func (e *testEnv) file(rel, content string) string {
	e.t.Helper()
	p := filepath.Join(e.files, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	h := fnv.New64a()
	h.Write([]byte(e.t.Name() + "\x00" + rel))
	return fmt.Sprintf("%016x", h.Sum64())
}

// item builds an item as homeindexd does (job fields, uid) for a file written with file.
func (e *testEnv) item(id, rel, uid string, attempt int) string {
	e.t.Helper()
	doc := fmt.Sprintf(`{"id":%q,"paths":{%q:1.5},"mtime":1.5,"size":3,"type":"text/plain","next":"m","paths_list":[%q],"copies":1,"version":1,"has_archive_paths":false,"offline":false}`, id, rel, rel)
	it, err := protocol.BuildItem(id, json.RawMessage(doc), uid, protocol.Job{Token: "abc123", Attempt: attempt, Since: 1700000000000})
	if err != nil {
		e.t.Fatal(err)
	}
	return it
}

// pyItem builds an item as the upstream Python core does: json.dumps of the document plus
// uid, Python spacing, no job fields.
func pyItem(id, rel, uid string) string {
	return fmt.Sprintf(`{"id": %q, "paths": {%q: 1.0}, "uid": %q}`, id, rel, uid)
}

func (e *testEnv) push(key string, items ...string) {
	e.t.Helper()
	if len(items) == 0 {
		return
	}
	args := make([]any, len(items))
	for i, it := range items {
		args[i] = it
	}
	// One RPUSH: the worker sees all the items at once, never a part of them.
	if err := e.rdb.RPush(e.ctx, key, args...).Err(); err != nil {
		e.t.Fatal(err)
	}
}

// nextDone pops the next modules:done message, failing the test after waitFor.
func (e *testEnv) nextDone() string {
	e.t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		v, err := e.rdb.Do(e.ctx, "BLPOP", protocol.DoneKey, "0.05").StringSlice()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			e.t.Fatal(err)
		}
		return v[1]
	}
	e.t.Fatalf("no done message within %v", waitFor)
	return ""
}

// eventually waits until cond holds, failing the test after waitFor.
func (e *testEnv) eventually(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // a polling interval, not synchronisation
	}
}

// now is the Redis server clock in epoch seconds.
func (e *testEnv) now() float64 {
	e.t.Helper()
	tm, err := e.rdb.Time(e.ctx).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	return float64(tm.UnixMicro()) / 1e6
}

func (e *testEnv) llen(key string) int64 {
	e.t.Helper()
	n, err := e.rdb.LLen(e.ctx, key).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *testEnv) lrange(key string) []string {
	e.t.Helper()
	v, err := e.rdb.LRange(e.ctx, key, 0, -1).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// reapExpired does what the upstream core's reaper does for every expired member: the item
// goes back to the head of its queue (modules.py process_timeouts).
func (e *testEnv) reapExpired() int {
	e.t.Helper()
	members, err := e.rdb.ZRangeArgs(e.ctx, redis.ZRangeArgs{Key: protocol.TimeoutsKey, ByScore: true,
		Start: "-inf", Stop: strconv.FormatFloat(e.now(), 'f', 6, 64)}).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, m := range members {
		q, item, err := protocol.ParseTimeoutMember(m)
		if err != nil {
			e.t.Fatalf("member %q: %v", m, err)
		}
		_, err = e.rdb.TxPipelined(e.ctx, func(p redis.Pipeliner) error {
			p.ZRem(e.ctx, protocol.TimeoutsKey, m)
			p.LRem(e.ctx, protocol.ProcessingKey(q), 0, item)
			p.LPush(e.ctx, q, item)
			return nil
		})
		if err != nil {
			e.t.Fatal(err)
		}
	}
	return len(members)
}

// logBuffer keeps the workers' log lines for assertions and shows them with t.Log.
type logBuffer struct {
	t   *testing.T
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.buf.Write(p)
	l.mu.Unlock()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// count returns how many lines contain every one of parts.
func (l *logBuffer) count(parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range strings.Split(l.buf.String(), "\n") {
		ok := line != ""
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			n++
		}
	}
	return n
}

// handler is a Handler made of funcs that records every call.
type handler struct {
	check func(ctx context.Context, job *Job) (bool, error)
	run   func(ctx context.Context, job *Job) (Result, error)

	mu      sync.Mutex
	runs    []span // every Run, in start order
	loads   int
	unloads int
}

// span is one Run: which document, when it started and ended.
type span struct {
	id         string
	start, end time.Time
}

func (h *handler) Check(ctx context.Context, job *Job) (bool, error) {
	if h.check == nil {
		return true, nil
	}
	return h.check(ctx, job)
}

func (h *handler) Run(ctx context.Context, job *Job) (Result, error) {
	s := span{id: job.ID, start: time.Now()}
	defer func() {
		s.end = time.Now()
		h.mu.Lock()
		h.runs = append(h.runs, s)
		h.mu.Unlock()
	}()
	if h.run == nil {
		return Result{}, nil
	}
	return h.run(ctx, job)
}

func (h *handler) Load(context.Context) error {
	h.mu.Lock()
	h.loads++
	h.mu.Unlock()
	return nil
}

func (h *handler) Unload(context.Context) error {
	h.mu.Lock()
	h.unloads++
	h.mu.Unlock()
	return nil
}

func (h *handler) spans() []span {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]span(nil), h.runs...)
}

func (h *handler) phases() (loads, unloads int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.loads, h.unloads
}

// mustDone parses a done message and its echoed item.
func mustDone(t *testing.T, raw string) (protocol.DoneMessage, protocol.ItemInfo) {
	t.Helper()
	m, err := protocol.ParseDone([]byte(raw))
	if err != nil {
		t.Fatalf("ParseDone(%s): %v", raw, err)
	}
	info, err := m.Item()
	if err != nil {
		t.Fatalf("done document %s: %v", m.Document, err)
	}
	return m, info
}
