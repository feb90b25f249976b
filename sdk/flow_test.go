package sdk

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/homeindex/homeindex/protocol"
)

// TestCheckFalseSendsItemBack: a check that says no answers modules:done with the item's
// identity and job fields, and leaves nothing held.
func TestCheckFalseSendsItemBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.file("a.txt", "abc")
	item := e.item(id, "a.txt", "uid-m", 1)
	h := &handler{check: func(_ context.Context, job *Job) (bool, error) {
		if job.Path != filepath.Join(e.files, "a.txt") || job.ID != id || job.Attempt != 1 ||
			job.MetadataDir != filepath.Join(e.meta, "by-id", id, "m") || job.Document.Paths[0].Path != "a.txt" {
			t.Errorf("job = %+v", job)
		}
		return false, nil
	}}
	e.push("m:check", item)
	e.serve(e.config("m"), h)
	want := `{"module":"m","document":{"id":"` + id + `","uid":"uid-m","_hi_job":"abc123","_hi_attempt":1,"_hi_since":1700000000000}}`
	if got := e.nextDone(); got != want {
		t.Errorf("done message\n got %s\nwant %s", got, want)
	}
	e.eventually("nothing held", func() bool {
		n, _ := e.rdb.ZCard(e.ctx, protocol.TimeoutsKey).Result()
		return n == 0 && e.llen("m:check:processing") == 0 && e.llen("m:run") == 0
	})
	if len(h.spans()) != 0 {
		t.Error("Run was called")
	}
	if _, err := os.Stat(filepath.Join(e.meta, "by-id", id)); !os.IsNotExist(err) {
		t.Errorf("a check created the metadata directory (%v)", err)
	}
}

// TestRunResult: check, run, and the done message carries the module, the item's identity
// and job fields, the module's fields (and no other field of the item) and its content.
func TestRunResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		content Content
		want    string
	}{
		{"text", Text("hello world"), `"hello world"`},
		{"texts", Texts{"page 1", "page 2"}, `["page 1","page 2"]`},
		{"segments", Segments{{Text: "hi", Fields: map[string]any{"time_offset": 1.5, "time_length": 2}}, {Text: "there"}},
			`[{"text":"hi","time_length":2,"time_offset":1.5},{"text":"there"}]`},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			id := e.file("dir/a.txt", "abc")
			item := e.item(id, "dir/a.txt", "uid-m", 2)
			h := &handler{run: func(_ context.Context, job *Job) (Result, error) {
				if b, err := os.ReadFile(job.Path); err != nil || string(b) != "abc" {
					t.Errorf("read %s: %q, %v", job.Path, b, err)
				}
				if st, err := os.Stat(job.MetadataDir); err != nil || !st.IsDir() {
					t.Errorf("metadata dir: %v", err)
				}
				return Result{Document: map[string]any{"note": "hello", "caption": map[string]any{"text": "a cat"}}, Content: tc.content}, nil
			}}
			e.push("m:check", item)
			e.serve(e.config("m"), h)
			raw := e.nextDone()
			m, info := mustDone(t, raw)
			if m.Module != "m" || m.Error != "" || m.Legacy {
				t.Errorf("message %s: %+v", raw, m)
			}
			if info.ID != id || info.UID != "uid-m" || !info.HasJob || info.Job != (protocol.Job{Token: "abc123", Attempt: 2, Since: 1700000000000}) {
				t.Errorf("echoed item %+v", info)
			}
			if want := `{"id":"` + id + `","uid":"uid-m","_hi_job":"abc123","_hi_attempt":2,"_hi_since":1700000000000,"caption":{"text":"a cat"},"note":"hello"}`; string(m.Document) != want {
				t.Errorf("document\n got %s\nwant %s", m.Document, want)
			}
			if string(m.Content) != tc.want {
				t.Errorf("content %s, want %s", m.Content, tc.want)
			}
			if tc.content == nil && strings.Contains(raw, `"content"`) {
				t.Errorf("content sent without content: %s", raw)
			}
			e.eventually("nothing held", func() bool {
				n, _ := e.rdb.ZCard(e.ctx, protocol.TimeoutsKey).Result()
				return n == 0 && e.llen("m:run:processing") == 0 && e.llen("m:check:processing") == 0
			})
		})
	}
}

// TestPythonCoreItem: an item exactly as the Python core queues it (a bare document with uid,
// Python spacing, no job fields) is checked, run and answered with the whole document echoed
// (that core replaces document.json with it; nested values are copied verbatim), and its
// timeouts member is what the Python core's reaper parses.
func TestPythonCoreItem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.file("a b/é.txt", "abc")
	item := `{"id": "` + id + `", "paths": {"a b/\u00e9.txt": 1.0}, "mtime": 1.0, "next": "m", "uid": "uid-m"}`
	members := make(chan []string, 1)
	h := &handler{run: func(_ context.Context, job *Job) (Result, error) {
		if job.Attempt != 0 || job.Path != filepath.Join(e.files, "a b", "é.txt") {
			t.Errorf("job = %+v", job)
		}
		ms, _ := e.rdb.ZRange(e.ctx, protocol.TimeoutsKey, 0, -1).Result()
		members <- ms
		return Result{Document: map[string]any{"note": "hello"}, Content: Text("hello world")}, nil
	}}
	e.push("m:check", item)
	e.serve(e.config("m"), h)
	raw := e.nextDone()
	m, info := mustDone(t, raw)
	if info.ID != id || info.UID != "uid-m" || info.HasJob || m.Error != "" {
		t.Errorf("done %s: %+v", raw, info)
	}
	want := `{"module":"m","document":{"id":"` + id + `","paths":{"a b/\u00e9.txt": 1.0},"mtime":1.0,"next":"m","uid":"uid-m","note":"hello"},"content":"hello world"}`
	if raw != want {
		t.Errorf("done message\n got %s\nwant %s", raw, want)
	}
	ms := <-members
	wantMember := `{"q": "m:run", "d": "{\"id\": \"` + id + `\", \"paths\": {\"a b/\\u00e9.txt\": 1.0}, \"mtime\": 1.0, \"next\": \"m\", \"uid\": \"uid-m\"}"}`
	if len(ms) != 1 || ms[0] != wantMember {
		t.Errorf("timeouts members %q, want [%s]", ms, wantMember)
	}
}

// TestPythonDonePayloads: the daemon's parser reads modules:done payloads exactly as the
// Python runtime writes them (json.dumps, "module" last for results, first for skips).
func TestPythonDonePayloads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw                 string
		id, content, note   string
		job                 bool
		legacy, hasNoteWant bool
	}{
		// run_server.py process_run: payload = result (has "document"); payload["module"] = name
		{raw: `{"document": {"id": "abc", "paths": {"a.txt": 1.0}, "uid": "u", "note": "hello"}, "content": "hello world", "module": "example-module"}`,
			id: "abc", content: `"hello world"`, note: `"hello"`},
		// result without "document": {"document": result, "module": name}
		{raw: `{"document": {"id": "abc", "paths": {"a.txt": 1.0}, "uid": "u", "_hi_job": "ff", "_hi_attempt": 3, "_hi_since": 7}, "module": "timeout-module"}`,
			id: "abc", job: true},
		// process_check with check() false
		{raw: `{"module": "example-module", "document": {"id": "abc", "paths": {"a.txt": 1.0}, "uid": "u"}}`, id: "abc"},
	} {
		m, err := protocol.ParseDone([]byte(tc.raw))
		if err != nil {
			t.Fatalf("ParseDone(%s): %v", tc.raw, err)
		}
		info, err := m.Item()
		if err != nil || info.ID != tc.id || info.UID != "u" || info.HasJob != tc.job || m.Legacy || m.Error != "" {
			t.Errorf("%s: %+v, %+v, %v", tc.raw, m, info, err)
		}
		if tc.job && (info.Job.Token != "ff" || info.Job.Attempt != 3) {
			t.Errorf("%s: job %+v", tc.raw, info.Job)
		}
		if string(m.Content) != tc.content {
			t.Errorf("%s: content %s", tc.raw, m.Content)
		}
		if protocol.DonePermanent([]byte(tc.raw)) {
			t.Errorf("%s: read as permanent", tc.raw)
		}
	}
}

// TestResultRejected: a result naming a core field, or content JSON cannot hold, fails the
// job permanently instead of sending something the daemon would refuse.
func TestResultRejected(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		res  Result
		want string
	}{
		{"core field", Result{Document: map[string]any{"paths": map[string]any{}}}, `result document field \"paths\" belongs to the daemon`},
		{"job field", Result{Document: map[string]any{"_hi_job": "x"}}, `result document field \"_hi_job\" belongs to the daemon`},
		{"segment text", Result{Content: Segments{{Text: "a", Fields: map[string]any{"text": "b"}}}}, `segment field \"text\"`},
		{"bad value", Result{Document: map[string]any{"x": func() {}}}, `result document field \"x\"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			id := e.file("a.txt", "abc")
			e.push("m:run", e.item(id, "a.txt", "uid-m", 1))
			e.serve(e.config("m"), &handler{run: func(context.Context, *Job) (Result, error) { return tc.res, nil }})
			raw := e.nextDone()
			m, _ := mustDone(t, raw)
			if !strings.Contains(raw, tc.want) || m.Error == "" || !protocol.DonePermanent([]byte(raw)) {
				t.Errorf("done %s, want a permanent failure containing %s", raw, tc.want)
			}
		})
	}
}

// TestCheckedItemRunsAtOnce: a worker in a run phase runs an item it has just checked without
// sending it through m:run: the item moves from m:check:processing to m:run:processing in one
// step, with the run's timeouts member (what any reaper reads) and a run deadline; Run gets
// the Job Check saw; the result is the same as by the queue.
func TestCheckedItemRunsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := e.item(e.file("first.txt", "abc"), "first.txt", "uid-m", 1)
	secondID := e.file("second.txt", "def")
	second := e.item(secondID, "second.txt", "uid-m", 1)
	release := make(chan struct{})
	checked := make(chan *Job, 1)
	type held struct {
		run, runProcessing, checkProcessing []string
		members                             []redis.Z
		now                                 float64
	}
	seen := make(chan held, 1)
	h := &handler{
		check: func(_ context.Context, job *Job) (bool, error) {
			if job.ID == secondID {
				checked <- job
			}
			return true, nil
		},
		run: func(_ context.Context, job *Job) (Result, error) {
			if job.ID != secondID {
				<-release // the worker is in its run phase: now a check arrives
				return Result{}, nil
			}
			if c := <-checked; c != job {
				t.Errorf("Run got another Job than Check: %p, %p", job, c)
			}
			ms, _ := e.rdb.ZRangeWithScores(e.ctx, protocol.TimeoutsKey, 0, -1).Result()
			seen <- held{e.lrange("m:run"), e.lrange("m:run:processing"), e.lrange("m:check:processing"), ms, e.now()}
			return Result{Document: map[string]any{"note": "ran"}}, nil
		},
	}
	e.push("m:run", first) // checked earlier: the worker starts a run phase for it
	e.serve(e.config("m"), h)
	e.eventually("the first item running", func() bool { return len(e.lrange("m:run:processing")) == 1 })
	e.push("m:check", second)
	close(release)

	var s held
	select {
	case s = <-seen:
	case <-time.After(waitFor):
		t.Fatal("the checked item did not run")
	}
	if len(s.run) != 0 || len(s.checkProcessing) != 0 || len(s.runProcessing) != 1 || s.runProcessing[0] != second {
		t.Errorf("while it runs: m:run %q, m:check:processing %q, m:run:processing %q", s.run, s.checkProcessing, s.runProcessing)
	}
	if len(s.members) != 1 || s.members[0].Member != protocol.TimeoutMember("m:run", second) {
		t.Fatalf("timeouts %+v, want the run's member only", s.members)
	}
	if left := s.members[0].Score - s.now; left < 4 || left > 5 {
		t.Errorf("run deadline %.2f s away, want the 5 s timeout", left)
	}
	for range 2 {
		raw := e.nextDone()
		m, info := mustDone(t, raw)
		if info.ID == secondID && !strings.Contains(string(m.Document), `"note":"ran"`) {
			t.Errorf("second item's result %s", raw)
		}
	}
	e.eventually("nothing held", func() bool {
		n, _ := e.rdb.ZCard(e.ctx, protocol.TimeoutsKey).Result()
		return n == 0 && e.llen("m:run:processing") == 0 && e.llen("m:check:processing") == 0 && e.llen("m:run") == 0
	})
	if got := e.logs.count(`"phase":"run"`, `"id":"`+secondID+`"`, "run started"); got != 1 {
		t.Errorf("%d run-phase log lines for the second item, want 1", got)
	}
}

// TestCheckedItemWaitsBehindQueuedRuns: an item checked while others wait in m:run goes behind
// them, as through the queue (a plugged drive's jobs, queued first, run first).
func TestCheckedItemWaitsBehindQueuedRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := e.item(e.file("first.txt", "a"), "first.txt", "uid-m", 1)
	waitingID := e.file("waiting.txt", "b")
	freshID := e.file("fresh.txt", "c")
	release := make(chan struct{})
	h := &handler{run: func(_ context.Context, job *Job) (Result, error) {
		if job.Document.Paths[0].Path == "first.txt" {
			<-release
		}
		return Result{}, nil
	}}
	e.push("m:run", first)
	e.serve(e.config("m"), h)
	e.eventually("the first item running", func() bool { return len(e.lrange("m:run:processing")) == 1 })
	e.push("m:run", e.item(waitingID, "waiting.txt", "uid-m", 1))
	e.push("m:check", e.item(freshID, "fresh.txt", "uid-m", 1))
	close(release)
	for range 3 {
		e.nextDone()
	}
	var order []string
	for _, s := range h.spans() {
		order = append(order, s.id)
	}
	if len(order) != 3 || order[1] != waitingID || order[2] != freshID {
		t.Errorf("runs %q, want the first, then %s (waiting in m:run), then %s (checked later)", order, waitingID, freshID)
	}
}

// yesHandler is a handler declaring that its checks always say yes, as HandlerFuncs with no
// CheckFunc does; its Check still counts calls, to show which items skipped it.
type yesHandler struct{ *handler }

func (yesHandler) alwaysYes() bool { return true }

// TestAlwaysYesClaimsStraightIntoRun: a worker whose checks cannot say no checks only the item
// that starts its run phase; after that each claim takes a queued run first, then a check item
// built for its uid straight into its run (one script, the run's timeouts member, never in
// m:check:processing). An item for another uid is still claimed as a check.
func TestAlwaysYesClaimsStraightIntoRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	queuedID := e.file("queued.txt", "q")
	queued := e.item(queuedID, "queued.txt", "uid-m", 1)
	var ids []string
	var items []string
	for _, name := range []string{"c1.txt", "c2.txt", "c3.txt"} {
		id := e.file(name, name)
		ids = append(ids, id)
		items = append(items, e.item(id, name, "uid-m", 1))
	}
	var checks atomic.Int32
	type held struct {
		checkProcessing, runProcessing []string
		members                        []string
	}
	var mu sync.Mutex
	seen := map[string]held{}
	h := yesHandler{&handler{
		check: func(context.Context, *Job) (bool, error) { checks.Add(1); return true, nil },
		run: func(_ context.Context, job *Job) (Result, error) {
			ms, _ := e.rdb.ZRange(e.ctx, protocol.TimeoutsKey, 0, -1).Result()
			mu.Lock()
			seen[job.ID] = held{e.lrange("m:check:processing"), e.lrange("m:run:processing"), ms}
			mu.Unlock()
			return Result{}, nil
		},
	}}
	foreign := e.item(e.file("foreign.txt", "f"), "foreign.txt", "uid-other", 1)
	e.push("m:run", queued) // checked earlier: it keeps its turn
	e.push("m:check", items[0], foreign, items[1], items[2])
	e.serve(e.config("m"), h)
	for range 4 {
		e.nextDone()
	}
	var order []string
	for _, s := range h.spans() {
		order = append(order, s.id)
	}
	if want := append([]string{queuedID}, ids...); !slices.Equal(order, want) {
		t.Errorf("runs in order %q, want %q", order, want)
	}
	if n := checks.Load(); n != 1 {
		t.Errorf("Check called %d times, want once (the item that started the run phase)", n)
	}
	// The item built for another uid is claimed as a check and set aside there, for a worker
	// of its uid to check.
	if got := e.lrange("m:check:processing"); !slices.Equal(got, []string{foreign}) {
		t.Errorf("m:check:processing %q, want the foreign item", got)
	}
	if ms, _ := e.rdb.ZRange(e.ctx, protocol.TimeoutsKey, 0, -1).Result(); !slices.Equal(ms, []string{protocol.TimeoutMember("m:check", foreign)}) {
		t.Errorf("timeouts %q, want the foreign item's check member", ms)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, id := range ids[1:] {
		s := seen[id]
		it := items[i+1]
		if slices.Contains(s.checkProcessing, it) || !slices.Equal(s.runProcessing, []string{it}) {
			t.Errorf("while %s runs: m:check:processing %q, m:run:processing %q", id, s.checkProcessing, s.runProcessing)
		}
		if !slices.Contains(s.members, protocol.TimeoutMember("m:run", it)) || slices.Contains(s.members, protocol.TimeoutMember("m:check", it)) {
			t.Errorf("while %s runs: timeouts %q, want its run member only", id, s.members)
		}
	}
}

// TestAlwaysYesForeignItemLoadsNothing: an item built for another uid does not start an
// always-yes worker's run phase (no Load for an item it will not run); it is set aside as a
// check.
func TestAlwaysYesForeignItemLoadsNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	foreign := e.item(e.file("foreign.txt", "f"), "foreign.txt", "uid-other", 1)
	h := yesHandler{&handler{}}
	e.push("m:check", foreign)
	e.serve(e.config("m"), h)
	e.eventually("the foreign item set aside", func() bool { return e.logs.count("uid mismatch") == 1 })
	if loads, _ := h.phases(); loads != 0 {
		t.Errorf("%d loads for an item of another uid, want 0", loads)
	}
	if got := e.lrange("m:check:processing"); !slices.Equal(got, []string{foreign}) {
		t.Errorf("m:check:processing %q, want the foreign item", got)
	}
}
