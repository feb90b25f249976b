package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/internal/metadata"
	"github.com/homeindex/homeindex/internal/state"
	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
	"github.com/homeindex/homeindex/sdk"
)

// fixture is a pipeline's surroundings from real parts: a redis-server, a catalog and a
// metadata directory under one temp directory, and the daemon's configuration.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	srv   *redistest.Server
	rdb   *redis.Client // seeding and assertions
	vars  map[string]string
	state string
	cat   *catalog.Catalog
	store *metadata.Store
}

// modulesYAML renders MODULES for names; "m2@2" is module m2 with uid 2.
func modulesYAML(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		uid := "1"
		if i := strings.IndexByte(n, '@'); i >= 0 {
			n, uid = n[:i], n[i+1:]
		}
		fmt.Fprintf(&b, "- name: %s\n  uid: %q\n", n, uid)
	}
	return b.String()
}

func newFixture(t *testing.T, modules string) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{t: t, ctx: context.Background(), srv: redistest.Start(t), state: filepath.Join(base, "state")}
	f.rdb = f.srv.Client()
	f.vars = map[string]string{
		"INDEX_DIRECTORY":    filepath.Join(base, "files"),
		"METADATA_DIRECTORY": filepath.Join(base, "metadata"),
		"STATE_DIRECTORY":    f.state,
		"HTTP_ADDR":          "",
		"REDIS_HOST":         f.srv.Addr(),
		"MODULES":            modules,
		"DISPATCH_WINDOW":    "4",
		"REAP_INTERVAL":      "50ms",
	}
	for _, d := range []string{f.vars["INDEX_DIRECTORY"], f.state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if f.cat, err = catalog.Open(filepath.Join(f.state, "catalog.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.cat.Close() })
	if f.store, err = metadata.Open(f.vars["METADATA_DIRECTORY"]); err != nil {
		t.Fatal(err)
	}
	return f
}

// waker counts Wake calls (the outbox).
type waker struct {
	mu sync.Mutex
	n  int
}

func (w *waker) Wake() { w.mu.Lock(); w.n++; w.mu.Unlock() }

// pipeline builds a pipeline from the current vars, as a daemon (re)start does.
func (f *fixture) pipeline(predecessor func() (string, bool, func())) *Pipeline {
	f.t.Helper()
	cfg, err := config.Load(func(k string) string { return f.vars[k] })
	if err != nil {
		f.t.Fatalf("config: %v", err)
	}
	p := New(Config{Daemon: cfg, Catalog: f.cat, Store: f.store, Outbox: &waker{}, Log: zerolog.New(zerolog.NewTestWriter(f.t)),
		Predecessor: predecessor})
	if err := p.Pauses().Load(f.ctx); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// run runs p until the returned stop is called (stop waits for Run to return).
func (f *fixture) run(p *Pipeline) (stop func()) {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := p.Run(ctx); err != nil {
			f.t.Errorf("pipeline: %v", err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	f.t.Cleanup(stop)
	return stop
}

// ready waits up to d for p to hold the lock and run.
func (f *fixture) ready(p *Pipeline, d time.Duration) {
	f.t.Helper()
	select {
	case <-p.Ready():
	case <-time.After(d):
		f.t.Fatalf("pipeline not running after %s: %+v", d, p.Condition())
	}
}

// standby checks that p stays a standby for a bounded observation.
func (f *fixture) standby(p *Pipeline) {
	f.t.Helper()
	select {
	case <-p.Ready():
		f.t.Fatal("took the Redis lock while another daemon holds it")
	case <-time.After(500 * time.Millisecond):
	}
}

// addDoc creates a live document with one path whose `next` is next.
func (f *fixture) addDoc(id, path, next string) {
	f.t.Helper()
	err := f.cat.Update(f.ctx, func(tx *catalog.Tx) error {
		if _, err := tx.InsertDocument(f.ctx, catalog.DocRow{ID: id, Type: "text/plain", Size: 5, Next: next, Version: 1}); err != nil {
			return err
		}
		if err := tx.PutFile(f.ctx, catalog.File{Path: path, DocID: id, Dev: 1, Ino: uint64(len(path)), Size: 5,
			MtimeNs: 1_700_000_000_500_000_000, Mtime: 1700000000.5}); err != nil {
			return err
		}
		return tx.Dirty(f.ctx, catalog.DocKey(id), catalog.PathKey(path))
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// nexts returns how many live documents wait on each module ("" = done).
func (f *fixture) nexts() map[string]int64 {
	f.t.Helper()
	n, err := f.cat.NextValues(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(d)
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out after %s waiting for %s", d, what)
		case <-tick.C:
		}
	}
}

func (f *fixture) checkLen(module string) int64 {
	n, _ := f.rdb.LLen(f.ctx, protocol.CheckKey(module)).Result()
	return n
}

// A second daemon on the same Redis waits as a standby while the first holds the lock, and
// takes over once the first stops (and gives the lock back).
func TestStandbyTakesOverWhenTheActiveStops(t *testing.T) {
	f := newFixture(t, modulesYAML("m1"))
	first := f.pipeline(nil)
	stopFirst := f.run(first)
	f.ready(first, 20*time.Second)
	second := f.pipeline(nil)
	f.run(second)
	f.standby(second)
	if c := second.Condition(); !strings.HasPrefix(c.Reason, "standby") {
		t.Fatalf("standby condition %q", c.Reason)
	}
	stopFirst()
	f.ready(second, 30*time.Second)
	if holder, err := f.rdb.Get(f.ctx, protocol.LockKey).Result(); err != nil || holder != second.Owner() {
		t.Fatalf("lock holder %q (%v), want %q", holder, err, second.Owner())
	}
}

// A restart after a crash takes the lock over at once when it holds the token its state
// directory recorded (Config.Predecessor); a lock held by anyone else is waited for. Its own
// token is recorded for the next restart before it tries the lock.
func TestRestartTakesItsDeadPredecessorsLock(t *testing.T) {
	f := newFixture(t, modulesYAML("m1"))
	pred := func() (string, bool, func()) { return "this-host:1:1", true, func() {} }
	if err := f.rdb.Set(f.ctx, protocol.LockKey, "other-host:1:1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	p := f.pipeline(pred)
	stop := f.run(p)
	f.standby(p)
	// Recorded before the lock is taken: killed right after taking it, this daemon's successor
	// would otherwise find no token and wait out the TTL.
	if got := LastOwner(f.state); got != p.Owner() {
		t.Fatalf("recorded owner while standing by %q, want %q", got, p.Owner())
	}
	stop()

	if err := f.rdb.Set(f.ctx, protocol.LockKey, "this-host:1:1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	p = f.pipeline(pred)
	f.run(p)
	f.ready(p, 10*time.Second)
	if holder, err := f.rdb.Get(f.ctx, protocol.LockKey).Result(); err != nil || holder != p.Owner() {
		t.Fatalf("lock holder %q (%v), want %q", holder, err, p.Owner())
	}
	if got := LastOwner(f.state); got != p.Owner() {
		t.Fatalf("recorded owner %q, want %q", got, p.Owner())
	}
}

// A daemon that does not hold the state directory (another live daemon shares it) leaves that
// daemon's recorded token alone while it stands by: a crash and restart of the live one can
// still take its own lock over at once.
func TestStandbyWithoutTheStateDirectoryKeepsTheRecord(t *testing.T) {
	f := newFixture(t, modulesYAML("m1"))
	if err := recordOwner(f.state, "live-host:1:1"); err != nil {
		t.Fatal(err)
	}
	if err := f.rdb.Set(f.ctx, protocol.LockKey, "live-host:1:1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	p := f.pipeline(func() (string, bool, func()) { return "", false, func() {} })
	f.run(p)
	f.standby(p)
	if got := LastOwner(f.state); got != "live-host:1:1" {
		t.Fatalf("recorded owner %q after a standby without the directory started, want the live daemon's", got)
	}
}

// Redis losing its data (a new epoch) makes the pipeline forget the catalog's jobs in flight
// and dispatch them again.
func TestRedisLosingItsDataRedispatchesJobsInFlight(t *testing.T) {
	f := newFixture(t, modulesYAML("m1"))
	for i := range 3 {
		f.addDoc(fmt.Sprintf("d%d", i), fmt.Sprintf("f%d.txt", i), "m1")
	}
	p := f.pipeline(nil)
	f.run(p)
	f.ready(p, 20*time.Second)
	waitFor(t, 10*time.Second, "three jobs queued", func() bool { return f.checkLen("m1") == 3 })
	f.srv.Flush()
	waitFor(t, 30*time.Second, "the jobs dispatched again after FLUSHALL", func() bool { return f.checkLen("m1") == 3 })
}

// With no record of the modules (first start with MODULES), every document goes through the
// chain; a module whose uid changed gets back every document that passed it, the modules
// before it do not; an unchanged list changes nothing.
func TestModulesChangesRequeueFromTheChangePoint(t *testing.T) {
	f := newFixture(t, modulesYAML("m1", "m2", "m3"))
	f.addDoc("done", "done.txt", "")
	f.addDoc("at-m2", "m2.txt", "m2")
	p := f.pipeline(nil)
	stop := f.run(p)
	f.ready(p, 20*time.Second)
	stop()
	if got, want := f.nexts(), map[string]int64{"m1": 1, "m2": 1}; !maps.Equal(got, want) {
		t.Fatalf("first start: documents per next %v, want %v", got, want)
	}
	// Everything done (as if the modules ran), then m2's uid changes.
	if _, err := f.cat.MoveNext(f.ctx, "m1", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cat.MoveNext(f.ctx, "m2", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.rdb.FlushAll(f.ctx).Result(); err != nil { // drop the first run's jobs
		t.Fatal(err)
	}
	if _, err := f.cat.DeleteQueuedJobs(f.ctx); err != nil {
		t.Fatal(err)
	}
	p = f.pipeline(nil)
	stop = f.run(p)
	f.ready(p, 20*time.Second)
	stop()
	if got, want := f.nexts(), map[string]int64{"": 2}; !maps.Equal(got, want) {
		t.Fatalf("unchanged restart: documents per next %v, want %v", got, want)
	}
	f.vars["MODULES"] = modulesYAML("m1", "m2@2", "m3")
	p = f.pipeline(nil)
	f.run(p)
	f.ready(p, 20*time.Second)
	if got, want := f.nexts(), map[string]int64{"m2": 2}; !maps.Equal(got, want) {
		t.Fatalf("m2's uid changed: documents per next %v, want %v", got, want)
	}
	saved, found, err := state.Load(f.state)
	if err != nil || !found || len(saved) != 3 || saved[1].UID != "2" {
		t.Fatalf("modules state %+v (found %v, %v), want m2 at uid 2", saved, found, err)
	}
}

// A job a module failed for good is parked (in Redis's failed set and in the catalog); the
// next start sends it back to the module's check queue with a new token and attempt 1, and
// the catalog records the job as queued under that token, so the new run's result is merged.
func TestParkedJobsRunAgainAtStart(t *testing.T) {
	f := newFixture(t, modulesYAML("m1"))
	f.addDoc("poison", "poison.bin", "m1")
	p := f.pipeline(nil)
	stop := f.run(p)
	f.ready(p, 20*time.Second)

	w, err := sdk.NewWorker(sdk.Config{Module: "m1", UID: "1", Redis: redisconn.Endpoint{Addr: f.srv.Addr()},
		MetadataDir: f.vars["METADATA_DIRECTORY"], FilesDir: f.vars["INDEX_DIRECTORY"], Log: zerolog.NewTestWriter(t)},
		sdk.HandlerFuncs{RunFunc: func(context.Context, *sdk.Job) (sdk.Result, error) {
			return sdk.Result{}, sdk.Permanent(errors.New("cannot decode poison"))
		}})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stopWorker := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- w.Serve(wctx) }()
	job := func() catalog.Job {
		j, _, err := f.cat.Job(f.ctx, "poison", "m1")
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	waitFor(t, 20*time.Second, "the job parked", func() bool { return job().State == catalog.JobParked })
	stopWorker()
	if err := <-served; err != nil {
		t.Fatalf("worker: %v", err)
	}
	stop()
	parked := job()
	if n := f.checkLen("m1"); n != 0 {
		t.Fatalf("m1:check holds %d items while the job is parked", n)
	}
	if n, _ := f.rdb.HLen(f.ctx, protocol.FailedKey("m1")).Result(); n != 1 {
		t.Fatalf("m1:failed holds %d jobs, want the parked one", n)
	}

	p = f.pipeline(nil)
	f.run(p)
	f.ready(p, 20*time.Second) // parked jobs are retried before Ready
	items, err := f.rdb.LRange(f.ctx, protocol.CheckKey("m1"), 0, -1).Result()
	if err != nil || len(items) != 1 {
		t.Fatalf("m1:check %v (%v), want the parked job back", items, err)
	}
	info, err := protocol.ParseItem(items[0])
	if err != nil {
		t.Fatal(err)
	}
	again := job()
	if again.State != catalog.JobQueued || again.Attempt != 1 || again.Reason != "" {
		t.Fatalf("job after start %+v, want queued at attempt 1 with no reason", again)
	}
	if again.Token == parked.Token || again.Token != info.Job.Token || info.Job.Attempt != 1 {
		t.Fatalf("catalog token %q (parked %q), item token %q attempt %d: want one new token, attempt 1",
			again.Token, parked.Token, info.Job.Token, info.Job.Attempt)
	}
	if n, _ := f.rdb.HLen(f.ctx, protocol.FailedKey("m1")).Result(); n != 0 {
		t.Fatalf("m1:failed still holds %d jobs", n)
	}
}
