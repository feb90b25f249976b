package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/internal/filesync"
	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/protocol"
)

// testEnv is a daemon built from real parts (catalog, metadata dir, embedded index) over a
// files tree in a temp dir.
type testEnv struct {
	t      testing.TB
	ctx    context.Context
	root   string // INDEX_DIRECTORY
	meta   string
	state  string
	vars   map[string]string
	app    *App
	logBuf *strings.Builder
}

func newTestEnv(t *testing.T, vars ...string) *testEnv {
	t.Helper()
	base := t.TempDir()
	e := &testEnv{t: t, ctx: context.Background(), root: filepath.Join(base, "files"),
		meta: filepath.Join(base, "metadata"), state: filepath.Join(base, "state")}
	if err := os.MkdirAll(e.root, 0o755); err != nil {
		t.Fatal(err)
	}
	e.vars = map[string]string{
		"INDEX_DIRECTORY":    e.root,
		"METADATA_DIRECTORY": e.meta,
		"STATE_DIRECTORY":    e.state,
		"LOG_FORMAT":         "json",
		"HTTP_ADDR":          "",
		"SETTLE_TIME":        "0", // files are written just before each sync; settle_test.go covers it
	}
	for i := 0; i+1 < len(vars); i += 2 {
		e.vars[vars[i]] = vars[i+1]
	}
	t.Cleanup(func() { e.close() })
	return e
}

// open (re)opens the app with the current vars, as a daemon restart does.
func (e *testEnv) open() *App {
	e.t.Helper()
	e.close()
	cfg, err := config.Load(func(k string) string { return e.vars[k] })
	if err != nil {
		e.t.Fatalf("config: %v", err)
	}
	e.logBuf = &strings.Builder{}
	log := zerolog.New(zerolog.SyncWriter(&lockedWriter{b: e.logBuf}))
	a, err := Open(e.ctx, cfg, log)
	if err != nil {
		e.t.Fatalf("open: %v", err)
	}
	if err := a.ImportLegacy(e.ctx); err != nil {
		e.t.Fatalf("import: %v", err)
	}
	e.app = a
	return a
}

func (e *testEnv) close() {
	if e.app != nil {
		if err := e.app.Close(); err != nil {
			e.t.Errorf("close: %v", err)
		}
		e.app = nil
	}
}

// sync runs one sync and drains the outbox; the derived stores must then agree with the catalog.
func (e *testEnv) sync() filesync.Stats {
	e.t.Helper()
	if e.app == nil {
		e.open()
	}
	st, err := e.app.SyncOnce(e.ctx, "test")
	if err != nil {
		e.t.Fatalf("sync: %v", err)
	}
	res, err := e.app.Outbox.Drain(e.ctx)
	if err != nil || res.MetaFailed > 0 || res.IndexPending > 0 {
		e.t.Fatalf("outbox: %+v %v", res, err)
	}
	problems, err := e.app.Verify(e.ctx)
	if err != nil {
		e.t.Fatalf("verify: %v", err)
	}
	if len(problems) > 0 {
		e.t.Fatalf("catalog, metadata and index disagree:\n%s", strings.Join(problems, "\n"))
	}
	return st
}

func (e *testEnv) abs(rel string) string { return filepath.Join(e.root, filepath.FromSlash(rel)) }

func (e *testEnv) write(rel, content string) string {
	e.t.Helper()
	p := e.abs(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return idOf(content)
}

func (e *testEnv) remove(rel string) {
	e.t.Helper()
	if err := os.RemoveAll(e.abs(rel)); err != nil {
		e.t.Fatal(err)
	}
}

func idOf(content string) string {
	var b [8]byte
	h := xxhash.Sum64String(content)
	for i := 7; i >= 0; i-- {
		b[i] = byte(h)
		h >>= 8
	}
	const hexd = "0123456789abcdef"
	out := make([]byte, 16)
	for i, c := range b {
		out[2*i], out[2*i+1] = hexd[c>>4], hexd[c&15]
	}
	return string(out)
}

// doc reads by-id/<id>/document.json.
func (e *testEnv) doc(id string) protocol.Document {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.meta, "by-id", id, "document.json"))
	if err != nil {
		e.t.Fatalf("document %s: %v", id, err)
	}
	var d protocol.Document
	if err := json.Unmarshal(b, &d); err != nil {
		e.t.Fatalf("document %s: %v", id, err)
	}
	return d
}

func (e *testEnv) hasDir(id string) bool {
	_, err := os.Stat(filepath.Join(e.meta, "by-id", id))
	return err == nil
}

// search returns the sorted ids matching a filter (and optional words).
func (e *testEnv) search(q, filter string) []string {
	e.t.Helper()
	res, err := e.app.Index.Files().Search(e.ctx, search.Query{Q: q, Filter: filter, Limit: 1000})
	if err != nil {
		e.t.Fatalf("search %q %q: %v", q, filter, err)
	}
	var ids []string
	for _, h := range res.Hits {
		var d struct{ ID string }
		_ = json.Unmarshal(h, &d)
		ids = append(ids, d.ID)
	}
	sort.Strings(ids)
	return ids
}

func (e *testEnv) indexed(id string) bool {
	return len(e.search("", `id = "`+id+`"`)) == 1
}

// link returns the by-id directory a by-path link resolves to ("" when missing).
func (e *testEnv) link(rel string) string {
	p := filepath.Join(e.meta, "by-path", filepath.FromSlash(rel))
	target, err := os.Readlink(p)
	if err != nil {
		return ""
	}
	if filepath.IsAbs(target) {
		e.t.Errorf("by-path/%s: link is absolute: %s", rel, target)
	}
	if _, err := os.Stat(p); err != nil {
		e.t.Errorf("by-path/%s: dangling: %v", rel, err)
	}
	return filepath.Base(target)
}

func (e *testEnv) marker(drive string) (state, content string) {
	for _, s := range []string{"ready", "pending"} {
		b, err := os.ReadFile(filepath.Join(e.root, "archive", drive+"-status-"+s))
		if err == nil {
			if state != "" {
				e.t.Errorf("drive %s has both markers", drive)
			}
			state, content = s, string(b)
		}
	}
	return state, content
}

// seedLegacy writes an upstream-format document.json (as the Python core wrote it).
func (e *testEnv) seedLegacy(doc map[string]any) {
	e.t.Helper()
	id := doc["id"].(string)
	dir := filepath.Join(e.meta, "by-id", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	b, _ := json.MarshalIndent(doc, "", "    ")
	if err := os.WriteFile(filepath.Join(dir, "document.json"), b, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *testEnv) setMtime(rel string, t time.Time) {
	e.t.Helper()
	if err := os.Chtimes(e.abs(rel), t, t); err != nil {
		e.t.Fatal(err)
	}
}

type lockedWriter struct {
	b *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) { return w.b.Write(p) }
