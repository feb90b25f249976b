package app

import (
	"context"
	"errors"
	"fmt"
	"github.com/homeindex/homeindex/internal/pipeline"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
)

// pipelineEnv is a testEnv with a real redis-server and the pipeline running. The tests here
// check the wiring end to end (sync, outbox, pipeline, workers speaking the raw protocol); the
// pipeline's and the dispatcher's own rules are specified in internal/pipeline and
// internal/dispatch.
type pipelineEnv struct {
	*testEnv
	redis  *redistest.Server
	pipe   *pipeline.Pipeline
	cancel context.CancelFunc
	done   chan struct{}
}

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

func newPipelineEnv(t *testing.T, modules string, vars ...string) *pipelineEnv {
	t.Helper()
	srv := redistest.Start(t)
	all := append([]string{"REDIS_HOST", srv.Addr(), "MODULES", modules, "DISPATCH_WINDOW", "4",
		"REAP_INTERVAL", "50ms", "RETRY_BASE", "10ms", "RETRY_MAX", "50ms", "MAX_ATTEMPTS", "3"}, vars...)
	return &pipelineEnv{testEnv: newTestEnv(t, all...), redis: srv}
}

// start opens the app and runs the pipeline and the outbox in the background.
func (p *pipelineEnv) start() {
	p.t.Helper()
	if p.app == nil {
		p.open()
	}
	p.pipe = p.app.NewPipeline(nil)
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.done = make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = p.app.Outbox.Run(ctx) }()
	go func() {
		defer wg.Done()
		if err := p.pipe.Run(ctx); err != nil {
			p.t.Errorf("pipeline: %v", err)
		}
	}()
	go func() { wg.Wait(); close(p.done) }()
	select {
	case <-p.pipe.Ready():
	case <-time.After(20 * time.Second):
		p.t.Fatal("pipeline not ready")
	}
	p.t.Cleanup(p.stop)
}

func (p *pipelineEnv) stop() {
	if p.cancel != nil {
		p.cancel()
		<-p.done
		p.cancel = nil
	}
}

// syncNow runs a sync and wakes the pipeline (no consistency check: work is in flight).
func (p *pipelineEnv) syncNow() {
	p.t.Helper()
	if _, err := p.app.SyncOnce(p.ctx, "test"); err != nil {
		p.t.Fatalf("sync: %v", err)
	}
	p.pipe.Wake()
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
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

// allDone reports whether every live document has cleared the chain and the outbox is empty.
func (p *pipelineEnv) allDone() bool {
	if pending, err := p.app.Catalog.HasPending(p.ctx); err != nil || pending {
		return false
	}
	total, _, err := p.app.Catalog.OutboxLen(p.ctx)
	return err == nil && total == 0
}

// settle waits until everything is done, then checks the derived stores agree.
func (p *pipelineEnv) settle(d time.Duration) {
	p.t.Helper()
	waitFor(p.t, d, "every document through the chain", p.allDone)
	problems, err := p.app.Verify(p.ctx)
	if err != nil || len(problems) > 0 {
		p.t.Fatalf("verify: %v\n%s", err, strings.Join(problems, "\n"))
	}
}

// worker starts a raw-protocol worker for module.
func (p *pipelineEnv) worker(module string, run func(doc map[string]any) (map[string]any, any, error)) *rawWorker {
	w := &rawWorker{t: p.t, rdb: p.redis.Client(), module: module, timeout: 30 * time.Second, run: run}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.serve(ctx) }()
	w.stop = func() { cancel(); <-done }
	p.t.Cleanup(w.stop)
	return w
}

func note(field string, v any) func(map[string]any) (map[string]any, any, error) {
	return func(map[string]any) (map[string]any, any, error) { return map[string]any{field: v}, nil, nil }
}

func TestPipelineRunsEveryFileThroughTheChain(t *testing.T) {
	p := newPipelineEnv(t, modulesYAML("m1", "m2"))
	ids := []string{p.write("archive/drive1/a.txt", "a"), p.write("b.txt", "b"), p.write("c.txt", "c")}
	p.start()
	p.syncNow()
	if s, _ := p.marker("drive1"); s != "pending" {
		t.Fatalf("marker %q before modules ran, want pending", s)
	}
	p.worker("m1", note("m1_note", "one"))
	p.worker("m2", func(doc map[string]any) (map[string]any, any, error) {
		return map[string]any{"m2_note": "two", "id": "evil", "next": "x"}, "hello world from m2", nil
	})
	p.settle(30 * time.Second)
	for _, id := range ids {
		d := p.doc(id)
		if d.Next != "" || string(d.Fields["m1_note"]) != `"one"` || string(d.Fields["m2_note"]) != `"two"` || d.ID != id {
			t.Fatalf("document %s: %+v", id, d)
		}
		if _, err := os.Stat(filepath.Join(p.meta, "by-id", id, "m2", "chunks.json")); err != nil {
			t.Fatalf("no chunks.json: %v", err)
		}
	}
	if s, _ := p.marker("drive1"); s != "ready" {
		t.Fatalf("marker %q after modules ran, want ready", s)
	}
	if got := p.search("", `next IS EMPTY`); len(got) != 3 {
		t.Fatalf("index not updated: %v", got)
	}
	res, err := p.app.Index.Chunks().Search(p.ctx, searchQuery("hello", fmt.Sprintf(`file_id = %q`, ids[0])))
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("chunk search: %v %v", res.Hits, err)
	}
}

func assertTierAFirst(t *testing.T, runs []workerRun, tierA func(workerRun) bool) {
	t.Helper()
	var lastA, firstB time.Time
	for _, r := range runs {
		if tierA(r) {
			if r.End.After(lastA) {
				lastA = r.End
			}
		} else if firstB.IsZero() || r.Start.Before(firstB) {
			firstB = r.Start
		}
	}
	if lastA.IsZero() || firstB.IsZero() || lastA.After(firstB) {
		t.Fatalf("tier A did not finish before tier B started (last A end %v, first B start %v): %+v", lastA, firstB, runs)
	}
}

// gatedWorker starts a worker whose first run holds until the returned gate is closed, and
// returns once that first run has started.
func (p *pipelineEnv) gatedWorker(module string) (*rawWorker, chan struct{}) {
	gate := make(chan struct{})
	var once sync.Once
	started := make(chan struct{})
	w := p.worker(module, func(doc map[string]any) (map[string]any, any, error) {
		once.Do(func() { close(started) })
		<-gate
		return map[string]any{"x": 1}, nil, nil
	})
	<-started
	return w, gate
}

func TestPluggedDrivePreemptsWaitingJobs(t *testing.T) {
	p := newPipelineEnv(t, modulesYAML("m1"), "DISPATCH_WINDOW", "2")
	for i := 0; i < 8; i++ {
		p.write(fmt.Sprintf("r%02d.txt", i), fmt.Sprintf("regular %d", i))
	}
	p.start()
	p.syncNow()
	w, gate := p.gatedWorker("m1") // one regular job runs, one waits in the window
	for i := 0; i < 3; i++ {
		p.write(fmt.Sprintf("archive/usb/p%d.jpg", i), fmt.Sprintf("photo %d", i))
	}
	p.syncNow()
	// The plug is noticed by the sync; the dispatcher then withdraws the waiting regular job
	// and queues the drive's first.
	waitFor(t, 10*time.Second, "a drive job at the head of the queue", func() bool {
		head, _ := p.redis.Client().LIndex(p.ctx, "m1:check", 0).Result()
		return strings.Contains(head, "archive/usb/")
	})
	close(gate)
	p.settle(30 * time.Second)
	runs := w.record()
	// Every drive job starts before every regular job that had not started when it was plugged.
	assertTierAFirst(t, runs[1:], func(r workerRun) bool { return p.doc(r.ID).HasArchivePaths })
}

func TestUnpluggedDriveJobsWaitAndResume(t *testing.T) {
	p := newPipelineEnv(t, modulesYAML("m1"), "DISPATCH_WINDOW", "1")
	for i := 0; i < 4; i++ {
		p.write(fmt.Sprintf("archive/usb/f%d.txt", i), fmt.Sprintf("file %d", i))
	}
	p.start()
	p.syncNow()
	w, gate := p.gatedWorker("m1")
	// Unplug: the mount point stays, empty.
	tmp := t.TempDir()
	if err := os.Rename(p.abs("archive/usb"), filepath.Join(tmp, "usb")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(p.abs("archive/usb"), 0o755)
	p.syncNow()
	waitFor(t, 10*time.Second, "the drive's absence to reach the catalog", func() bool {
		d, _ := p.app.Catalog.Drives(p.ctx)
		return !d["usb"]
	})
	close(gate)
	waitFor(t, 30*time.Second, "the running job to finish", func() bool { return len(w.record()) == 1 })
	// Nothing else of the drive starts while it is absent.
	p.pipe.Dispatcher().RefillAll(p.ctx)
	if n, _ := p.pipe.Queue().InFlight(p.ctx, "m1"); n != 0 {
		t.Fatalf("%d jobs of an absent drive in the queue", n)
	}
	if len(w.record()) != 1 {
		t.Fatalf("jobs ran while the drive was absent: %+v", w.record())
	}
	if s, _ := p.marker("usb"); s != "pending" {
		t.Fatalf("marker %q while absent with work left, want pending", s)
	}
	os.Remove(p.abs("archive/usb"))
	if err := os.Rename(filepath.Join(tmp, "usb"), p.abs("archive/usb")); err != nil {
		t.Fatal(err)
	}
	p.syncNow()
	p.settle(30 * time.Second)
	if len(w.record()) != 4 {
		t.Fatalf("runs: %d, want 4", len(w.record()))
	}
	if s, _ := p.marker("usb"); s != "ready" {
		t.Fatalf("marker %q, want ready", s)
	}
}

func TestFailingJobIsParkedAndTheRestFinish(t *testing.T) {
	p := newPipelineEnv(t, modulesYAML("m1", "m2"))
	poison := p.write("archive/d/poison.bin", "poison")
	p.write("archive/d/ok.txt", "fine")
	p.start()
	p.syncNow()
	var mu sync.Mutex
	attempts := 0
	p.worker("m1", func(doc map[string]any) (map[string]any, any, error) {
		if doc["id"] == poison {
			mu.Lock()
			attempts++
			mu.Unlock()
			return nil, nil, errors.New("cannot decode poison")
		}
		return map[string]any{"ok": true}, nil, nil
	})
	p.worker("m2", note("m2", true))
	p.settle(30 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	if attempts != 3 {
		t.Fatalf("poison attempts %d, want MAX_ATTEMPTS 3", attempts)
	}
	d := p.doc(poison)
	if !strings.Contains(string(d.Failures), "cannot decode poison") || d.Next != "" {
		t.Fatalf("poison document: failures %s next %q", d.Failures, d.Next)
	}
	if s, _ := p.marker("d"); s != "ready" {
		t.Fatalf("drive %q, want ready despite the poison file", s)
	}
}

func TestTimedOutJobIsReapedAndRetried(t *testing.T) {
	p := newPipelineEnv(t, modulesYAML("m1"))
	id := p.write("a.txt", "a")
	p.start()
	p.syncNow()
	// A worker takes the job and dies: item in :check:processing, deadline soon.
	waitFor(t, 10*time.Second, "the job queued", func() bool {
		n, _ := p.redis.Client().LLen(p.ctx, "m1:check").Result()
		return n == 1
	})
	dead := &rawWorker{t: t, rdb: p.redis.Client(), module: "m1", timeout: 100 * time.Millisecond}
	item, _ := p.redis.Client().LPop(p.ctx, "m1:check").Result()
	member := protocolTimeout("m1:check", item)
	p.redis.Client().ZAdd(p.ctx, "timeouts", redisZ(float64(time.Now().Add(dead.timeout).UnixNano())/1e9, member))
	p.redis.Client().RPush(p.ctx, "m1:check:processing", item)
	p.worker("m1", note("done", true))
	p.settle(30 * time.Second)
	if string(p.doc(id).Fields["done"]) != "true" {
		t.Fatal("not merged after the reaper requeued it")
	}
	if st := p.pipe.Reaper().Stats(); st.Requeued+st.Retrying == 0 {
		t.Fatalf("reaper stats: %+v", st)
	}
}
