// Package moduletest tests a module's sdk.Handler against a real redis-server, fed the way
// homeindexd feeds it, in a few lines:
//
//	out := moduletest.Run(t, myModule{}, moduletest.File("a.txt", "hello"))
//	if out[0].Fields["note"] != `"hello"` { ... }
//
// Run starts redis-server (from PATH, on a free 127.0.0.1 port), writes the files under a
// temporary FILES_DIRECTORY, queues one item per file on <module>:check exactly as the daemon
// builds them, serves the handler with an sdk.Worker until every file has an answer, and
// returns each file's outcome: the fields and content the module returned, its failure, and
// the files it left in its metadata directory. Nothing is retried.
package moduletest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/gabriel-vasile/mimetype"
	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
	"github.com/homeindex/homeindex/sdk"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Defaults of a Run.
const (
	Module  = "moduletest"
	UID     = "moduletest-uid"
	Timeout = 10 * time.Second // per check and per run
)

// Option adds a file to a Run or changes its worker's configuration.
type Option func(*setup)

type setup struct {
	files []file
	cfg   sdk.Config
}

type file struct{ rel, content string }

// File queues a file: its path relative to FILES_DIRECTORY (slash-separated) and its content.
func File(rel, content string) Option {
	return func(s *setup) { s.files = append(s.files, file{rel, content}) }
}

// Configure changes the worker's configuration before it starts, e.g. a shorter Timeout.
// Redis, the directories, Module and UID are set already (changing Module or UID is allowed).
func Configure(fn func(*sdk.Config)) Option {
	return func(s *setup) { fn(&s.cfg) }
}

// Outcome is what the module answered for one file.
type Outcome struct {
	Path string // as given to File
	ID   string // the document id: xxh64 of the content, 16 hex digits
	// Ran is true when Run returned a result.
	Ran bool
	// Skipped is true when Check returned false.
	Skipped bool
	// Err is the failure the module reported (check or run), "" if none; Permanent tells
	// whether it was wrapped in sdk.Permanent.
	Err       string
	Permanent bool
	// TimedOut is true when the job passed its deadline without an answer.
	TimedOut bool
	// Fields are the module's fields in the returned document (core and job fields left out),
	// as raw JSON.
	Fields map[string]json.RawMessage
	// Content is the returned content as raw JSON; nil when none.
	Content json.RawMessage
	// Files holds every file in the module's metadata directory (log.txt included), by
	// slash-separated path.
	Files map[string][]byte
	// Message is the raw modules:done message; "" when none came.
	Message string
}

// Run serves h over the files and returns their outcomes in the order given. It fails tb if
// the setup fails, or if an answer is missing 3×Timeout + 10 s after the start.
func Run(tb testing.TB, h sdk.Handler, opts ...Option) []Outcome {
	tb.Helper()
	srv := redistest.Start(tb)
	base := tb.TempDir()
	s := &setup{cfg: sdk.Config{
		Module:      Module,
		UID:         UID,
		Redis:       redisconn.Endpoint{Addr: srv.Addr()},
		Timeout:     Timeout,
		MetadataDir: filepath.Join(base, "metadata"),
		FilesDir:    filepath.Join(base, "files"),
		Log:         zerolog.NewTestWriter(tb),
	}}
	for _, o := range opts {
		o(s)
	}
	ctx := context.Background()
	rdb := srv.Client()
	outs := make([]Outcome, len(s.files))
	byID := map[string]int{}
	for i, f := range s.files {
		id, item, err := queueItem(s.cfg, f)
		if err != nil {
			tb.Fatalf("moduletest: %v", err)
		}
		if j, dup := byID[id]; dup {
			tb.Fatalf("moduletest: %s and %s have the same content: give each file its own", s.files[j].rel, f.rel)
		}
		byID[id] = i
		outs[i] = Outcome{Path: f.rel, ID: id}
		if err := rdb.RPush(ctx, protocol.CheckKey(s.cfg.Module), item).Err(); err != nil {
			tb.Fatalf("moduletest: queue %s: %v", f.rel, err)
		}
	}

	obs := &observed{h: h, ran: map[string]bool{}}
	w, err := sdk.NewWorker(s.cfg, obs)
	if err != nil {
		tb.Fatalf("moduletest: %v", err)
	}
	cfg := w.Config()
	serveCtx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- w.Serve(serveCtx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-served; err != nil {
				tb.Errorf("moduletest: Serve: %v", err)
			}
		})
	}
	tb.Cleanup(stop) // after a Fatalf

	deadline := time.Now().Add(3*cfg.Timeout + 10*time.Second)
	for left := len(outs); left > 0; {
		if time.Now().After(deadline) {
			tb.Fatalf("moduletest: %d of %d files got no answer by the deadline", left, len(outs))
		}
		kv, err := rdb.Do(ctx, "BLPOP", protocol.DoneKey, "0.1").StringSlice()
		switch {
		case errors.Is(err, redis.Nil):
			left -= expired(tb, rdb, outs, byID)
			continue
		case err != nil:
			tb.Fatalf("moduletest: read %s: %v", protocol.DoneKey, err)
		}
		if i, ok := record(tb, kv[1], outs, byID); ok {
			left--
			o := &outs[i]
			ran := obs.called(o.ID)
			o.Ran, o.Skipped = ran && o.Err == "", !ran && o.Err == ""
		}
	}
	stop() // the run log's last lines are written after the result is sent
	for i := range outs {
		outs[i].Files = readFiles(tb, filepath.Join(cfg.MetadataDir, "by-id", outs[i].ID, cfg.Module))
	}
	return outs
}

// observed records which documents reached Run, and passes Load and Unload on.
type observed struct {
	h   sdk.Handler
	mu  sync.Mutex
	ran map[string]bool
}

func (o *observed) Check(ctx context.Context, job *sdk.Job) (bool, error) { return o.h.Check(ctx, job) }

func (o *observed) Run(ctx context.Context, job *sdk.Job) (sdk.Result, error) {
	o.mu.Lock()
	o.ran[job.ID] = true
	o.mu.Unlock()
	return o.h.Run(ctx, job)
}

func (o *observed) Load(ctx context.Context) error {
	if l, ok := o.h.(sdk.Loader); ok {
		return l.Load(ctx)
	}
	return nil
}

func (o *observed) Unload(ctx context.Context) error {
	if u, ok := o.h.(sdk.Unloader); ok {
		return u.Unload(ctx)
	}
	return nil
}

func (o *observed) called(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ran[id]
}

// queueItem writes the file and builds its item as the daemon would.
func queueItem(cfg sdk.Config, f file) (id, item string, err error) {
	p := filepath.Join(cfg.FilesDir, filepath.FromSlash(f.rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
		return "", "", err
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", "", err
	}
	id = fmt.Sprintf("%016x", xxhash.Sum64String(f.content))
	mtime, _ := strconv.ParseFloat(strconv.FormatFloat(float64(st.ModTime().UnixNano())/1e9, 'f', 4, 64), 64)
	doc, err := json.Marshal(protocol.Document{
		ID: id, Paths: protocol.Paths{{Path: f.rel, Mtime: mtime}}, Mtime: mtime, Size: st.Size(),
		Type: mimetype.Detect([]byte(f.content)).String(), Next: cfg.Module, PathsList: []string{f.rel},
		Copies: 1, Version: protocol.CurrentVersion,
	})
	if err != nil {
		return "", "", err
	}
	item, err = protocol.BuildItem(id, doc, cfg.UID, protocol.Job{Token: protocol.NewToken(), Attempt: 1, Since: time.Now().UnixMilli()})
	return id, item, err
}

// record fills the outcome a done message answers.
func record(tb testing.TB, raw string, outs []Outcome, byID map[string]int) (int, bool) {
	tb.Helper()
	msg, err := protocol.ParseDone([]byte(raw))
	if err != nil {
		tb.Fatalf("moduletest: unreadable done message %s: %v", raw, err)
	}
	info, err := msg.Item()
	if err != nil {
		tb.Fatalf("moduletest: done message without a readable document: %v", err)
	}
	i, ok := byID[info.ID]
	if !ok || outs[i].Message != "" {
		tb.Errorf("moduletest: unexpected done message for %q: %s", info.ID, raw)
		return 0, false
	}
	o := &outs[i]
	o.Message = raw
	o.Content = msg.Content
	o.Err, o.Permanent = msg.Error, protocol.DonePermanent([]byte(raw))
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(msg.Document, &doc); err != nil {
		tb.Fatalf("moduletest: done document: %v", err)
	}
	o.Fields = map[string]json.RawMessage{}
	for k, v := range doc {
		if !protocol.IsCoreField(k) {
			o.Fields[k] = v
		}
	}
	return i, true
}

// expired records jobs whose deadline passed (by the Redis clock) as timed out, and removes
// them so nothing retries them. It returns how many it recorded.
func expired(tb testing.TB, rdb *redis.Client, outs []Outcome, byID map[string]int) int {
	tb.Helper()
	ctx := context.Background()
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		tb.Fatalf("moduletest: redis TIME: %v", err)
	}
	members, err := rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: protocol.TimeoutsKey, ByScore: true,
		Start: "-inf", Stop: strconv.FormatFloat(float64(now.UnixMicro())/1e6, 'f', 6, 64)}).Result()
	if err != nil {
		tb.Fatalf("moduletest: read %s: %v", protocol.TimeoutsKey, err)
	}
	n := 0
	for _, m := range members {
		q, item, err := protocol.ParseTimeoutMember(m)
		if err != nil {
			continue
		}
		info, err := protocol.ParseItem(item)
		i, ok := byID[info.ID]
		if err != nil || !ok || outs[i].Message != "" || outs[i].TimedOut {
			continue
		}
		rdb.ZRem(ctx, protocol.TimeoutsKey, m)
		rdb.LRem(ctx, protocol.ProcessingKey(q), 1, item)
		outs[i].TimedOut = true
		n++
	}
	return n
}

// readFiles returns every regular file under dir by slash-separated relative path.
func readFiles(tb testing.TB, dir string) map[string][]byte {
	tb.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		tb.Fatalf("moduletest: read %s: %v", dir, err)
	}
	return out
}
