package e2e

// The fault suite (docs/invariants.md, fault catalogue): crashes, restarts and outages of homeindexd, its
// modules, Redis, the disk and Meilisearch, judged the way Jepsen's total-queue checker judges a
// queue, at quiescence:
//
//   - lost: a file whose document has not cleared the chain, records a failure, or lacks a
//     merge (the catalog's merges table: per document and module, how many results merged)
//     for some module;
//   - double merge: a count over one for one (document, module), i.e. two results applied for
//     one file and module (two jobs, or one job's result applied twice);
//   - stranded: anything left in a processing list, the timeouts set, modules:done or the
//     daemon's in-flight hashes;
//   - agreement: app.Verify finds no difference between catalog, metadata directory and index,
//     and every document.json parses.
//
// Every test runs at a reduced size by default (make test); FAULT_FULL=1 selects the full
// sizes (make fault).

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	_ "modernc.org/sqlite" // the catalog's driver, for read-only progress queries

	"github.com/homeindex/homeindex/internal/app"
	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
)

// faultFull selects the full sizes (FAULT_FULL=1, make fault): 10,000 files, two modules.
var faultFull = os.Getenv("FAULT_FULL") == "1"

// faultSize is reduced under make test, full under make fault.
func faultSize(reduced, full int) int {
	if faultFull {
		return full
	}
	return reduced
}

// faultDuration is faultSize for durations.
func faultDuration(reduced, full time.Duration) time.Duration {
	if faultFull {
		return full
	}
	return reduced
}

// faultRand returns a seeded generator and logs the seed (FAULT_SEED replays a run).
func faultRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("FAULT_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("FAULT_SEED=%q: %v", v, err)
		}
		seed = n
	}
	t.Logf("fault seed %d (FAULT_SEED=%d replays it)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// withRedisArgs replaces the stack's redis-server by one started with extra arguments (on top
// of append-only), e.g. "--appendfsync", "everysec".
func withRedisArgs(args ...string) stackOption {
	return func(s *stack) {
		s.Redis = redistest.Start(s.t, redistest.WithAppendOnly(), redistest.WithArgs(args...))
		s.Daemon.Env["REDIS_HOST"] = "redis://" + s.Redis.Addr()
	}
}

// faultRun is a stack with n files (a fifth of them on the archive drive "usb") flowing through
// its modules, and the checks of the fault suite.
type faultRun struct {
	*stack
	ids  []string // every file's document id (all contents distinct)
	mods []string
	db   *sql.DB
}

// newFaultRun writes n files and configures (does not start) the daemon; window is
// DISPATCH_WINDOW.
func newFaultRun(t *testing.T, n, window int, mods []module, opts ...stackOption) *faultRun {
	t.Helper()
	opts = append([]stackOption{withDaemonEnv("DISPATCH_WINDOW", strconv.Itoa(window))}, opts...)
	s := newStack(t, mods, opts...)
	r := &faultRun{stack: s}
	for _, m := range mods {
		r.mods = append(r.mods, m.Name)
	}
	for i := range n {
		rel := fmt.Sprintf("d%03d/f%05d.txt", i/100, i)
		if i%5 == 4 {
			rel = "archive/usb/" + rel
		}
		r.ids = append(r.ids, s.write(rel, fmt.Sprintf("fault file %d of %d", i, n)))
	}
	t.Cleanup(func() {
		if r.db != nil {
			r.db.Close()
		}
	})
	return r
}

// catalog returns a read-only connection to the daemon's catalog (WAL lets it read beside the
// daemon's writer).
func (r *faultRun) catalog() *sql.DB {
	r.t.Helper()
	if r.db == nil {
		path := filepath.Join(r.State, "catalog.db")
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
		if err != nil {
			r.t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		r.db = db
	}
	return r.db
}

// count runs a count query on the catalog (-1 when the catalog cannot be read yet).
func (r *faultRun) count(query string, args ...any) int {
	if _, err := os.Stat(filepath.Join(r.State, "catalog.db")); err != nil {
		return -1
	}
	var n int
	if err := r.catalog().QueryRow(query, args...).Scan(&n); err != nil {
		return -1
	}
	return n
}

// merged is the number of results merged so far (the merges table's counts).
func (r *faultRun) merged() int { return r.count(`SELECT coalesce(sum(n), 0) FROM merges`) }

// complete is nil once every file's document has cleared the chain, every module's result is
// merged and the outbox has written everything out.
func (r *faultRun) complete() error {
	docs := r.count(`SELECT count(*) FROM documents WHERE retired = 0`)
	pending := r.count(`SELECT count(*) FROM documents WHERE retired = 0 AND next != ''`)
	merged := r.merged()
	outbox := r.count(`SELECT count(*) FROM outbox WHERE meta_done = 0 OR index_done = 0`)
	if docs != len(r.ids) || pending != 0 || merged < len(r.ids)*len(r.mods) || outbox != 0 {
		return fmt.Errorf("%d documents (want %d), %d not through the chain, %d merged (want %d), %d outbox entries",
			docs, len(r.ids), pending, merged, len(r.ids)*len(r.mods), outbox)
	}
	return nil
}

// waitComplete waits for complete, failing the test with the last state after d.
func (r *faultRun) waitComplete(d time.Duration) {
	r.t.Helper()
	waitUntil(r.t, d, fmt.Sprintf("%d files through %v", len(r.ids), r.mods), r.complete)
}

// assertNoLossNoDoubleMerge checks, from the catalog and every document.json: each file's
// document cleared the chain without a failure, each module's result merged exactly once, and
// every document.json parses. It returns the number of documents checked.
func (r *faultRun) assertNoLossNoDoubleMerge() int {
	r.t.Helper()
	db := r.catalog()
	rows, err := db.Query(`SELECT doc_id, module, n FROM merges`)
	if err != nil {
		r.t.Fatal(err)
	}
	mergesOf := map[string]int{} // id/module → merges
	var doubles []string
	for rows.Next() {
		var id, mod string
		var n int
		if err := rows.Scan(&id, &mod, &n); err != nil {
			r.t.Fatal(err)
		}
		mergesOf[id+"/"+mod] = n
		if n > 1 {
			doubles = append(doubles, fmt.Sprintf("%s/%s merged %d times", id, mod, n))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		r.t.Fatal(err)
	}
	var lost []string
	for _, id := range r.ids {
		d, err := r.doc(id)
		switch {
		case err != nil:
			lost = append(lost, fmt.Sprintf("%s: %v", id, err))
			continue
		case d.Next != "":
			lost = append(lost, fmt.Sprintf("%s: next %q", id, d.Next))
		case len(d.Failures) > 0:
			lost = append(lost, fmt.Sprintf("%s: failures %s", id, d.Failures))
		}
		for _, m := range r.mods {
			if mergesOf[id+"/"+m] == 0 {
				lost = append(lost, fmt.Sprintf("%s: no %s result merged", id, m))
			}
		}
	}
	if len(lost) > 0 || len(doubles) > 0 {
		r.t.Fatalf("%d lost, %d double merges (of %d files × %d modules):\n%s", len(lost), len(doubles),
			len(r.ids), len(r.mods), strings.Join(firstN(append(lost, doubles...), 40), "\n"))
	}
	return len(r.ids)
}

// assertNothingStranded checks that no module list, processing list, timeout, result or
// in-flight entry is left in Redis.
func (r *faultRun) assertNothingStranded() {
	r.t.Helper()
	if left := r.stranded(); len(left) > 0 {
		r.t.Fatalf("stranded in Redis: %v", left)
	}
}

// stranded lists the non-empty work keys of Redis.
func (r *faultRun) stranded() map[string]int64 {
	ctx := context.Background()
	rdb := r.Redis.Client()
	left := map[string]int64{}
	lists := []string{protocol.DoneKey, protocol.DoneProcessingKey}
	for _, m := range r.mods {
		lists = append(lists, protocol.CheckKey(m), protocol.RunKey(m), protocol.CheckProcessingKey(m), protocol.RunProcessingKey(m))
	}
	for _, k := range lists {
		if n, err := rdb.LLen(ctx, k).Result(); err != nil || n > 0 {
			left[k] = n
		}
	}
	if n, err := rdb.ZCard(ctx, protocol.TimeoutsKey).Result(); err != nil || n > 0 {
		left[protocol.TimeoutsKey] = n
	}
	for _, m := range r.mods {
		if n, err := rdb.HLen(ctx, protocol.JobsKey(m)).Result(); err != nil || n > 0 {
			left[protocol.JobsKey(m)] = n
		}
	}
	return left
}

// assertAgree stops the daemon (SIGTERM, exit 0) and checks with app.Verify that the catalog,
// the metadata directory and the search index agree exactly.
func (r *faultRun) assertAgree() {
	r.t.Helper()
	r.Daemon.Stop()
	if r.db != nil { // the daemon has checkpointed; reopen for later reads
		r.db.Close()
		r.db = nil
	}
	env := r.Daemon.Env
	cfg, err := config.Load(func(k string) string {
		if k == "HTTP_ADDR" {
			return "off"
		}
		return env[k]
	})
	if err != nil {
		r.t.Fatalf("config: %v", err)
	}
	ctx := context.Background()
	a, err := app.Open(ctx, cfg, zerolog.Nop())
	if err != nil {
		r.t.Fatalf("open the daemon's stores: %v", err)
	}
	defer a.Close()
	problems, err := a.Verify(ctx)
	if err != nil {
		r.t.Fatalf("verify: %v", err)
	}
	if len(problems) > 0 {
		r.t.Fatalf("catalog, metadata directory and index disagree (%d problems):\n%s", len(problems),
			strings.Join(firstN(problems, 40), "\n"))
	}
	live, _, err := a.Catalog.CountDocuments(ctx)
	if err != nil || int(live) != len(r.ids) {
		r.t.Fatalf("%d live documents in the catalog (%v), want %d", live, err, len(r.ids))
	}
}

// runsStarted counts, from the module processes' logs, the runs each (module, document) started
// (the SDK logs every run's lines, and the Go test modules begin with "start <path>"), killed
// runs included.
func (r *faultRun) runsStarted() map[string]int {
	r.t.Helper()
	out := map[string]int{}
	files, err := filepath.Glob(filepath.Join(r.Logs, "*.log"))
	if err != nil {
		r.t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Base(f) == "homeindexd.log" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			r.t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, `"message":"start `) {
				continue
			}
			var e struct{ Module, ID, Message string }
			if json.Unmarshal([]byte(line), &e) != nil || e.ID == "" {
				continue
			}
			out[e.Module+"/"+e.ID]++
		}
	}
	return out
}

// extraRuns is how many runs were started beyond one per file and module.
func (r *faultRun) extraRuns() (extra int, detail []string) {
	started := r.runsStarted()
	for _, id := range r.ids {
		for _, m := range r.mods {
			if n := started[m+"/"+id]; n > 1 {
				extra += n - 1
				detail = append(detail, fmt.Sprintf("%s/%s started %d times", m, id, n))
			}
		}
	}
	sort.Strings(detail)
	return extra, detail
}

// pid is the current incarnation's process id.
func (p *proc) pid() int {
	cmd, _ := p.current()
	if cmd == nil || cmd.Process == nil {
		p.t.Fatalf("%s: not started", p.name)
	}
	return cmd.Process.Pid
}

// cpuTime is the CPU time (user + system) a process has used, from /proc/<pid>/stat.
func cpuTime(t testing.TB, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The command name (field 2) may hold spaces; fields after its closing parenthesis are fixed.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		t.Fatalf("/proc/%d/stat: %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): utime is field 14, stime field 15.
	if len(f) < 13 {
		t.Fatalf("/proc/%d/stat: %q", pid, s)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatalf("/proc/%d/stat: %v", pid, err)
	}
	const clkTck = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / clkTck
}

// logLines counts a process's log lines containing every one of substrs.
func logLines(log string, substrs ...string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		ok := true
		for _, s := range substrs {
			if !strings.Contains(line, s) {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
	}
	return n
}

func firstN(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("… and %d more", len(s)-n))
}

// signal sends sig to the current incarnation without waiting.
func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	cmd, _ := p.current()
	if cmd == nil {
		p.t.Fatalf("%s: not started", p.name)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("%s: signal %v: %v", p.name, sig, err)
	}
}
