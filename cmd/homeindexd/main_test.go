package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/sqlitedb"
)

// binary is homeindexd built once, with the race detector, for the tests that run the real
// process; plainBinary is built without it for the crash test, whose cost is file-system work
// the race detector only slows down (3×), not checks.
var binary, plainBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "homeindexd-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "homeindexd")
	plainBinary = filepath.Join(dir, "homeindexd-plain")
	for _, b := range []struct {
		out  string
		args []string
	}{{binary, []string{"-race"}}, {plainBinary, nil}} {
		args := append(append([]string{"build"}, b.args...), "-o", b.out, ".")
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build homeindexd: %v\n%s", err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// daemonEnv is a files tree and the environment for one homeindexd.
type daemonEnv struct {
	t     *testing.T
	base  string
	vars  map[string]string
	plain bool // run the binary built without the race detector
}

func newDaemonEnv(t *testing.T, vars ...string) *daemonEnv {
	base := t.TempDir()
	d := &daemonEnv{t: t, base: base, vars: map[string]string{
		"INDEX_DIRECTORY":    filepath.Join(base, "files"),
		"METADATA_DIRECTORY": filepath.Join(base, "metadata"),
		"STATE_DIRECTORY":    filepath.Join(base, "state"),
		"LOG_FORMAT":         "json",
		"HTTP_ADDR":          "off",
		"SETTLE_TIME":        "0",
		"PATH":               os.Getenv("PATH"),
	}}
	for i := 0; i+1 < len(vars); i += 2 {
		d.vars[vars[i]] = vars[i+1]
	}
	os.MkdirAll(d.vars["INDEX_DIRECTORY"], 0o755)
	return d
}

func (d *daemonEnv) files() string { return d.vars["INDEX_DIRECTORY"] }

func (d *daemonEnv) write(rel, content string) {
	p := filepath.Join(d.files(), rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		d.t.Fatal(err)
	}
}

func (d *daemonEnv) cmd(ctx context.Context, args ...string) *exec.Cmd {
	bin := binary
	if d.plain {
		bin = plainBinary
	}
	c := exec.CommandContext(ctx, bin, args...)
	for k, v := range d.vars {
		c.Env = append(c.Env, k+"="+v)
	}
	return c
}

// run runs a command to its end and returns stdout, stderr and the exit code.
func (d *daemonEnv) run(args ...string) (string, string, int) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	c := d.cmd(ctx, args...)
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		d.t.Fatalf("run %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

func TestBadConfigListsEveryProblemAndExits2(t *testing.T) {
	d := newDaemonEnv(t, "CRON_EXPRESSION", "bad cron", "INDEX_DIRECTORY", "relative/path",
		"MODULES", "- name: ../m\n- name: ok\n- name: ok", "DISPATCH_WINDOW", "0")
	_, stderr, code := d.run("sync")
	if code != 2 {
		t.Fatalf("exit %d, want 2\n%s", code, stderr)
	}
	for _, want := range []string{"invalid cron expression", "INDEX_DIRECTORY", "MODULES[0].name", "MODULES[2].name", "DISPATCH_WINDOW"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(d.vars["STATE_DIRECTORY"]); !os.IsNotExist(err) {
		t.Error("state directory created despite bad configuration")
	}
}

func TestUsageErrorsExit2AndHelpExits0(t *testing.T) {
	d := newDaemonEnv(t)
	if _, _, code := d.run("frobnicate"); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
	if _, _, code := d.run("search", "--limit", "x"); code != 2 {
		t.Errorf("bad flag: exit %d", code)
	}
	for _, c := range []string{"run", "sync", "search", "version"} {
		out, _, code := d.run(c, "--help")
		if code != 0 || strings.Count(out, "usage: homeindexd "+c) != 1 {
			t.Errorf("%s --help: exit %d, want the usage once: %q", c, code, out)
		}
	}
	if out, _, code := d.run("version"); code != 0 || !strings.HasPrefix(out, "homeindexd ") {
		t.Errorf("version: %d %q", code, out)
	}
}

func TestSyncThenSearch(t *testing.T) {
	d := newDaemonEnv(t)
	d.write("notes/groceries.txt", "apples and pears")
	d.write("archive/usb1/scan-0001.txt", "scanned letter")
	out, stderr, code := d.run("sync", "--json")
	if code != 0 {
		t.Fatalf("sync exit %d: %s", code, stderr)
	}
	var res struct {
		Sync struct{ Added, Walked int }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Sync.Added != 2 {
		t.Fatalf("sync output %q: %v", out, err)
	}
	out, stderr, code = d.run("search", "--json", "groceries")
	if code != 0 || !strings.Contains(out, `"notes/groceries.txt"`) {
		t.Fatalf("search: %d %q %s", code, out, stderr)
	}
	out, _, _ = d.run("search", "--filter", "has_archive_paths = true", "--sort", "size:desc")
	if !strings.Contains(out, "1 hit\n") || !strings.Contains(out, "archive/usb1/scan-0001.txt") {
		t.Fatalf("filtered search: %q", out)
	}
	if _, stderr, code := d.run("search", "--filter", "size ~ 3"); code != 1 || !strings.Contains(stderr, "filter") {
		t.Fatalf("bad filter: %d %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(d.files(), "archive", "usb1-status-ready")); err != nil {
		t.Fatalf("drive marker: %v", err)
	}
}

// logWatcher collects a process's JSON log lines and lets a test wait for one.
type logWatcher struct {
	mu    sync.Mutex
	lines []map[string]any
	raw   strings.Builder
	cond  chan struct{}
}

func watchLogs(c *exec.Cmd) *logWatcher {
	w := &logWatcher{cond: make(chan struct{}, 1)}
	pr, pw, _ := os.Pipe()
	c.Stderr = pw
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			_ = json.Unmarshal(sc.Bytes(), &m)
			w.mu.Lock()
			w.lines = append(w.lines, m)
			w.raw.WriteString(sc.Text() + "\n")
			w.mu.Unlock()
			select {
			case w.cond <- struct{}{}:
			default:
			}
		}
	}()
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
	return w
}

// count returns how many lines have the message.
func (w *logWatcher) count(msg string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, l := range w.lines {
		if l["message"] == msg {
			n++
		}
	}
	return n
}

func (w *logWatcher) messages() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, l := range w.lines {
		if m, ok := l["message"].(string); ok {
			out = append(out, m)
		}
	}
	return out
}

// waitFor waits until cond holds or the deadline passes.
func (w *logWatcher) waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(d)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			w.mu.Lock()
			defer w.mu.Unlock()
			t.Fatalf("timed out waiting for %s; log:\n%s", what, w.raw.String())
		case <-w.cond:
		case <-tick.C:
		}
	}
}

func TestRunSyncsOnCronTicksWithoutOverlapAndStopsOnSIGTERM(t *testing.T) {
	d := newDaemonEnv(t, "CRON_EXPRESSION", "*/2 * * * * *")
	d.write("a.txt", "a")
	c := d.cmd(context.Background(), "run")
	w := watchLogs(c)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, 30*time.Second, "three completed syncs", func() bool { return w.count("completed file sync") >= 3 })
	// Starts and completions alternate: never two syncs at once.
	depth := 0
	for _, m := range w.messages() {
		switch m {
		case "start file sync":
			depth++
		case "completed file sync":
			depth--
		}
		if depth > 1 || depth < 0 {
			t.Fatalf("overlapping syncs: %v", w.messages())
		}
	}
	start := time.Now()
	if err := c.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("took over 10 s to stop")
	}
	if w.count("stopped") != 1 {
		t.Fatalf("no clean stop line: %v", w.messages())
	}
}

// A daemon's first start loads the search index as `homeindexd sync` does: its expression
// indexes wait until the first sync's documents are in, and are then built once, before the
// next sync starts. Later syncs and later starts leave them as they are.
func TestRunBuildsTheSearchIndexesOnceAfterItsFirstSync(t *testing.T) {
	d := newDaemonEnv(t, "CRON_EXPRESSION", "*/2 * * * * *")
	d.write("small.txt", "tiny")
	d.write("docs/big.txt", strings.Repeat("x", 5000))
	const built = "search index: indexes built after the first sync"
	runUntil := func(syncs int) []string {
		t.Helper()
		c := d.cmd(context.Background(), "run")
		w := watchLogs(c)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		w.waitFor(t, 60*time.Second, fmt.Sprint(syncs, " completed syncs"), func() bool { return w.count("completed file sync") >= syncs })
		if err := c.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := c.Wait(); err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
		return w.messages()
	}
	var order []string
	for _, m := range runUntil(2) {
		if m == "start file sync" || m == "completed file sync" || m == built {
			order = append(order, m)
		}
	}
	want := []string{"start file sync", "completed file sync", built, "start file sync", "completed file sync"}
	if len(order) < len(want) || !slices.Equal(order[:len(want)], want) || slices.Index(order[len(want):], built) >= 0 {
		t.Fatalf("first start: want the indexes built once, right after the first sync; got %q", order)
	}
	if got := searchIndexes(t, d); !slices.Contains(got, "sort size") || !slices.Contains(got, "value size") {
		t.Fatalf("after the first start, the files collection's indexes are %q: want size's value and sort indexes among them", got)
	}
	if out, stderr, code := d.run("search", "--filter", "size > 100", "--sort", "size:desc"); code != 0 || !strings.Contains(out, "1 hit\n") || !strings.Contains(out, "docs/big.txt") {
		t.Fatalf("search by size after the first start: %d %q %s", code, out, stderr)
	}
	if slices.Contains(runUntil(1), built) {
		t.Fatal("a second start loaded the index again")
	}
}

// searchIndexes lists the files collection's expression indexes in the daemon's search.db, as
// "<kind> <attribute>" ("sort size" for its sort indexes, "value size"...).
func searchIndexes(t *testing.T, d *daemonEnv) []string {
	t.Helper()
	db := sqlitedb.Open("file:" + filepath.Join(d.vars["STATE_DIRECTORY"], "search.db") + "?mode=ro")
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE 'files_x_%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	kinds := map[string]string{"v": "value", "m": "multi", "ka": "sort", "kd": "sort", "km": "multi"}
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		kind, attrHex, _ := strings.Cut(strings.TrimPrefix(name, "files_x_"), "_")
		attr, err := hex.DecodeString(attrHex)
		if err != nil {
			t.Fatalf("index %q: %v", name, err)
		}
		if kinds[kind] == "" {
			t.Fatalf("index %q: a kind this test does not know (search's index names changed?)", name)
		}
		if s := kinds[kind] + " " + string(attr); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// The profiles for performance work (HOMEINDEXD_CPUPROFILE, HOMEINDEXD_MEMPROFILE,
// HOMEINDEXD_TRACE) are written by the command that ran, each in its own format.
func TestSyncWritesTheProfilesAskedFor(t *testing.T) {
	dir := t.TempDir()
	cpu, mem, trace := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof"), filepath.Join(dir, "sync.trace")
	d := newDaemonEnv(t, "HOMEINDEXD_CPUPROFILE", cpu, "HOMEINDEXD_MEMPROFILE", mem, "HOMEINDEXD_TRACE", trace)
	d.write("notes/a.txt", "apples")
	if _, stderr, code := d.run("sync"); code != 0 {
		t.Fatalf("sync exit %d: %s", code, stderr)
	}
	gzipMagic := []byte{0x1f, 0x8b} // pprof's protocol buffers are gzipped
	for path, magic := range map[string][]byte{cpu: gzipMagic, mem: gzipMagic, trace: []byte("go 1.")} {
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(b, magic) {
			t.Errorf("%s: %d bytes starting %q (%v), want a file starting %q", filepath.Base(path), len(b), b[:min(len(b), 8)], err, magic)
		}
	}
	// A path that cannot be created stops the command before it runs, with the variable named.
	d = newDaemonEnv(t, "HOMEINDEXD_TRACE", filepath.Join(dir, "missing", "sync.trace"))
	if _, stderr, code := d.run("sync"); code == 0 || !strings.Contains(stderr, "HOMEINDEXD_TRACE") {
		t.Fatalf("unwritable trace: exit %d, %s", code, stderr)
	}
}
