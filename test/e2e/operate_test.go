package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/ops"
	"github.com/homeindex/homeindex/protocol"
)

// status runs `homeindexd status` (JSON: stdout is not a terminal) and decodes it.
func (s *stack) status() (ops.Status, error) {
	var st ops.Status
	out, errOut, code := s.cli("status")
	if code != 0 {
		return st, fmt.Errorf("status: exit %d: %s", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		return st, fmt.Errorf("status output %q: %w", out, err)
	}
	return st, nil
}

func (s *stack) mustStatus() ops.Status {
	s.t.Helper()
	st, err := s.status()
	if err != nil {
		s.t.Fatal(err)
	}
	return st
}

// cliJSON runs a command that prints JSON and decodes it into v; the exit code must be 0.
func (s *stack) cliJSON(v any, args ...string) {
	s.t.Helper()
	out, errOut, code := s.cli(args...)
	if code != 0 {
		s.t.Fatalf("homeindexd %v: exit %d: %s", args, code, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		s.t.Fatalf("homeindexd %v: output %q: %v", args, out, err)
	}
}

func moduleOf(st ops.Status, name string) ops.ModuleStatus {
	for _, m := range st.Modules {
		if m.Name == name {
			return m
		}
	}
	return ops.ModuleStatus{}
}

// metrics scrapes /metrics: series name{labels} → value.
func (s *stack) metrics() map[string]float64 {
	s.t.Helper()
	resp, err := http.Get("http://" + s.HTTPAddr + "/metrics")
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		s.t.Fatalf("GET /metrics: %d %s", resp.StatusCode, b)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			s.t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// getJSON GETs path and decodes a 200 answer into v.
func getJSON(t *testing.T, addr, path string, v any) {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %q: %v", path, b, err)
	}
}

// expectMetrics checks series values.
func expectMetrics(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		if v, ok := got[name]; !ok || v != w {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, w)
		}
	}
}

// expectNetDispatched checks dispatched minus withdrawn jobs: a drive seen mid-dispatch takes
// back its not-yet-started jobs and pushes them again ahead of the rest, which counts twice in
// dispatched_jobs_total and once in withdrawn_jobs_total.
func expectNetDispatched(t *testing.T, got map[string]float64, want float64) {
	t.Helper()
	d, w := got[`homeindex_dispatched_jobs_total`], got[`homeindex_withdrawn_jobs_total`]
	if d-w != want || w > d {
		t.Errorf("dispatched %v - withdrawn %v = %v, want %v", d, w, d-w, want)
	}
}

// Status, pause (persisted across a restart), resume, requeue and /metrics against a running
// daemon with real Redis and the example module: counts and metric values match the work
// done, a paused module gets no new dispatches, requeued drive files flip their drive to
// pending and are done again, and the CLI exits 1 when the daemon is unreachable.
func TestOperateStatusPauseRequeueMetrics(t *testing.T) {
	t.Parallel()
	const mod = "example-module"
	s := newStack(t, []module{{Name: mod, UID: "e1"}})
	var ids []string
	for i := range 3 {
		ids = append(ids, s.write(fmt.Sprintf("docs/f%d.txt", i), fmt.Sprintf("first %d", i)))
	}
	driveIDs := s.plug("usb", map[string]string{"a.txt": "drive a", "b.txt": "drive b"})
	for _, id := range driveIDs {
		ids = append(ids, id)
	}

	if _, errOut, code := s.cli("status"); code != 1 || !strings.Contains(errOut, "cannot reach the daemon") {
		t.Fatalf("status with no daemon: exit %d, %q; want 1 and a clear message", code, errOut)
	}
	s.Daemon.Start()
	s.startModule("example", bin.example, mod)
	waitUntil(t, 60*time.Second, "5 files through the module", s.docsDone(ids, noted))
	waitUntil(t, 30*time.Second, "status: 5 done, usb ready", func() error {
		st, err := s.status()
		if err != nil {
			return err
		}
		m := moduleOf(st, mod)
		if m.Done != 5 || m.Waiting+m.Queued+m.InFlight+m.Merging != 0 || m.ThroughputPerMinute != 5 || m.FinishedTotal != 5 {
			return fmt.Errorf("module %+v", m)
		}
		if len(st.Drives) != 1 || st.Drives[0] != (ops.DriveStatus{Name: "usb", Present: true, Marker: "ready", State: "ready", Files: 2, Done: 2}) {
			return fmt.Errorf("drives %+v", st.Drives)
		}
		if st.Sync.Last == nil || st.Sync.Last.Stats.Walked != 5 || st.Pipeline.State != ops.PipelineActive || st.Documents.Live != 5 {
			return fmt.Errorf("sync %+v, pipeline %+v, documents %+v", st.Sync.Last, st.Pipeline, st.Documents)
		}
		if m.ETA != "done" || m.OldestWaitingSeconds != nil {
			return fmt.Errorf("eta %q, oldest waiting %v: want done, none", m.ETA, m.OldestWaitingSeconds)
		}
		return nil
	})
	expectNetDispatched(t, s.metrics(), 5)
	expectMetrics(t, s.metrics(), map[string]float64{
		`homeindex_results_total{outcome="merged"}`:                     5,
		`homeindex_module_jobs_finished_total{module="example-module"}`: 5,
		`homeindex_module_done_documents{module="example-module"}`:      5,
		`homeindex_queue_jobs{module="example-module",state="waiting"}`: 0,
		`homeindex_queue_jobs{module="example-module",state="parked"}`:  0,
		`homeindex_documents{state="live"}`:                             5,
		`homeindex_drive_files{drive="usb",state="done"}`:               2,
		`homeindex_drive_present{drive="usb"}`:                          1,
		`homeindex_module_paused{module="example-module"}`:              0,
		`homeindex_redis_up`:                             1,
		`homeindex_sync_last_files{kind="walked"}`:       5,
		`homeindex_results_total{outcome="quarantined"}`: 0,
	})

	// The API on the real daemon: search, failed, and the POST guard.
	var found struct {
		Total int64             `json:"total"`
		Hits  []json.RawMessage `json:"hits"`
	}
	getJSON(t, s.HTTPAddr, "/api/search?filter="+url.QueryEscape(fmt.Sprintf("id = %q", ids[0])), &found)
	if found.Total != 1 || len(found.Hits) != 1 || !strings.Contains(string(found.Hits[0]), ids[0]) {
		t.Fatalf("search by id: %+v", found)
	}
	var failed ops.FailedList
	getJSON(t, s.HTTPAddr, "/api/failed", &failed)
	if len(failed.Parked) != 0 || failed.ParkedTotal[mod] != 0 {
		t.Fatalf("failed: %+v, want none", failed)
	}
	for _, h := range [][2]string{{"Content-Type", "text/plain"}, {"Origin", "http://evil.example"}} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+s.HTTPAddr+"/api/pause", strings.NewReader(`{"module":"`+mod+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(h[0], h[1])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType && resp.StatusCode != http.StatusForbidden {
			t.Fatalf("cross-site POST with %s: %d, want 415 or 403", h, resp.StatusCode)
		}
	}
	if m := moduleOf(s.mustStatus(), mod); m.Paused {
		t.Fatal("a refused cross-site POST paused the module")
	}

	// Pause: new files wait in the catalog, nothing is dispatched.
	var pr ops.PauseResult
	s.cliJSON(&pr, "pause", mod)
	if !pr.Paused || !pr.Changed {
		t.Fatalf("pause: %+v", pr)
	}
	if _, errOut, code := s.cli("pause", "no-such-module"); code != 1 || !strings.Contains(errOut, "not configured") {
		t.Fatalf("pause of an unknown module: exit %d %q, want 1 naming the problem", code, errOut)
	}
	var more []string
	for i := range 3 {
		more = append(more, s.write(fmt.Sprintf("later/g%d.txt", i), fmt.Sprintf("later %d", i)))
	}
	syncs := s.mustStatus().Sync.Count
	waitUntil(t, 30*time.Second, "3 new files waiting while paused, after two more syncs", func() error {
		st, err := s.status()
		if err != nil {
			return err
		}
		if m := moduleOf(st, mod); m.Waiting != 3 || !m.Paused || st.Sync.Count < syncs+2 {
			return fmt.Errorf("module %+v after %d syncs", m, st.Sync.Count-syncs)
		}
		return nil
	})
	if m := moduleOf(s.mustStatus(), mod); m.Queued != 0 || m.InFlight != 0 || m.Done != 5 || m.ETA != "unknown" {
		t.Fatalf("paused module got work: %+v", m)
	}
	expectNetDispatched(t, s.metrics(), 5)
	expectMetrics(t, s.metrics(), map[string]float64{
		`homeindex_module_paused{module="example-module"}`:              1,
		`homeindex_queue_jobs{module="example-module",state="waiting"}`: 3,
	})

	// The pause holds across a restart; the CLI fails clearly while the daemon is down.
	s.Daemon.Stop()
	if _, errOut, code := s.cli("status"); code != 1 || !strings.Contains(errOut, "cannot reach the daemon") {
		t.Fatalf("status of a stopped daemon: exit %d %q, want 1", code, errOut)
	}
	s.Daemon.Start()
	waitUntil(t, 30*time.Second, "restarted daemon still paused after two syncs", func() error {
		st, err := s.status()
		if err != nil {
			return err
		}
		m := moduleOf(st, mod)
		if st.Pipeline.State != ops.PipelineActive || !m.Paused || st.Sync.Count < 2 || m.Waiting != 3 {
			return fmt.Errorf("pipeline %+v, module %+v, %d syncs", st.Pipeline, m, st.Sync.Count)
		}
		return nil
	})
	expectMetrics(t, s.metrics(), map[string]float64{`homeindex_dispatched_jobs_total`: 0, `homeindex_module_paused{module="example-module"}`: 1})

	s.cliJSON(&pr, "resume", mod)
	if pr.Paused || !pr.Changed {
		t.Fatalf("resume: %+v", pr)
	}
	waitUntil(t, 60*time.Second, "the waiting files done after resume", s.docsDone(more, noted))
	waitUntil(t, 30*time.Second, "status: 8 done", func() error {
		if m := moduleOf(s.mustStatus(), mod); m.Done != 8 || m.Paused || m.Waiting != 0 {
			return fmt.Errorf("module %+v", m)
		}
		return nil
	})
	expectMetrics(t, s.metrics(), map[string]float64{
		`homeindex_results_total{outcome="merged"}`: 3, // this process's work only
		`homeindex_dispatched_jobs_total`:           3,
	})

	// Requeue the drive: its 2 files go back to the module, the drive flips to pending, and
	// both are merged again (the module's check skips the work it already did).
	if _, errOut, code := s.cli("requeue", "--module", mod, "--path", "../etc"); code != 1 || !strings.Contains(errOut, "..") {
		t.Fatalf("requeue outside the tree: exit %d %q, want 1", code, errOut)
	}
	if _, _, code := s.cli("requeue", "--path", "archive"); code != 2 {
		t.Fatalf("requeue without --module: exit %d, want 2", code)
	}
	var rq ops.Requeued
	s.cliJSON(&rq, "requeue", "--module", mod, "--path", s.Archive+"/usb/")
	if rq.Documents != 2 || rq.Path != "archive/usb" {
		t.Fatalf("requeue: %+v, want 2 documents under archive/usb", rq)
	}
	waitUntil(t, 60*time.Second, "requeued drive files merged again, usb ready", func() error {
		got := s.metrics()[`homeindex_results_total{outcome="merged"}`]
		if got != 5 {
			return fmt.Errorf("merged %v, want 5", got)
		}
		return s.markerIs("usb", "ready")()
	})
	expectMetrics(t, s.metrics(), map[string]float64{`homeindex_module_done_documents{module="example-module"}`: 8})
}

// Parked jobs are bounded by FAILED_MAX (oldest dropped and counted), listed with their
// reasons by `failed`, run again by `retry` (one file, or all), and forgotten by `failed clear`;
// the counts in status, the CLI and /metrics agree with the known failures.
func TestOperateFailedRetryClear(t *testing.T) {
	t.Parallel()
	const mod = "timeout-module"
	s := newStack(t, []module{{Name: mod, UID: "t1"}}, withDaemonEnv("MAX_ATTEMPTS", "1", "FAILED_MAX", "3"))
	var ids []string
	for i := range 5 {
		ids = append(ids, s.write(fmt.Sprintf("f%d.txt", i), fmt.Sprintf("poison %d", i)))
	}
	s.Daemon.Start()
	worker := s.startModule("timeout", bin.timeout, mod, "TIMEOUT", "0.3", "SLEEP", "30")
	waitUntil(t, 60*time.Second, "5 parked, 3 kept, 2 dropped by FAILED_MAX", func() error {
		st, err := s.status()
		if err != nil {
			return err
		}
		if m := moduleOf(st, mod); m.Parked != 3 || m.ParkedDropped != 2 || len(m.LatestFailures) != 3 {
			return fmt.Errorf("module %+v", m)
		}
		return nil
	})
	var list ops.FailedList
	s.cliJSON(&list, "failed", "--module", mod)
	if len(list.Parked) != 3 || list.ParkedTotal[mod] != 3 || list.ParkedDropped[mod] != 2 {
		t.Fatalf("failed: %+v", list)
	}
	for _, f := range list.Parked {
		if !strings.Contains(f.Reason, "timed out") || f.Attempts != 1 || f.Path == "" || f.Module != mod {
			t.Fatalf("parked job %+v: want a timeout reason, 1 attempt, its path", f)
		}
	}
	if n, err := s.Redis.Client().HLen(t.Context(), protocol.FailedKey(mod)).Result(); err != nil || n != 3 {
		t.Fatalf("%s holds %d records (%v), want 3", protocol.FailedKey(mod), n, err)
	}
	expectMetrics(t, s.metrics(), map[string]float64{
		`homeindex_queue_jobs{module="timeout-module",state="parked"}`: 3,
		`homeindex_parked_dropped_total{module="timeout-module"}`:      2,
		`homeindex_reaper_jobs_total{outcome="parked"}`:                5,
		`homeindex_results_total{outcome="merged"}`:                    0,
	})

	// Fixed: retry one file by path; it completes and its failure note goes.
	worker.Stop()
	worker.Env["SLEEP"] = "0"
	worker.Start()
	target := list.Parked[0]
	if _, errOut, code := s.cli("retry"); code != 2 || !strings.Contains(errOut, "--all") {
		t.Fatalf("retry without a target: exit %d %q, want 2", code, errOut)
	}
	if _, errOut, code := s.cli("retry", "--file", "no/such/file"); code != 1 || !strings.Contains(errOut, "no file") {
		t.Fatalf("retry of an unknown file: exit %d %q, want 1", code, errOut)
	}
	var rt ops.Retried
	s.cliJSON(&rt, "retry", "--file", target.Path)
	if rt.Total != 1 || rt.Retried[mod] != 1 {
		t.Fatalf("retry --file: %+v, want 1", rt)
	}
	waitUntil(t, 60*time.Second, "the retried file merged, its failure cleared", s.docsDone([]string{target.ID}, func(d protocol.Document) error {
		if len(d.Failures) > 0 && string(d.Failures) != "{}" {
			return fmt.Errorf("failures %s", d.Failures)
		}
		return nil
	}))
	waitUntil(t, 30*time.Second, "2 parked left", func() error {
		if m := moduleOf(s.mustStatus(), mod); m.Parked != 2 {
			return fmt.Errorf("module %+v", m)
		}
		return nil
	})

	// Clear: parked and quarantined records go; a retry then finds nothing.
	var cl ops.Cleared
	s.cliJSON(&cl, "failed", "clear", "--module", mod)
	if cl.Parked != 2 {
		t.Fatalf("failed clear: %+v, want 2 parked", cl)
	}
	s.cliJSON(&list, "failed")
	if len(list.Parked) != 0 || list.ParkedTotal[mod] != 0 || list.ParkedDropped[mod] != 2 {
		t.Fatalf("failed after clear: %+v", list)
	}
	if n, _ := s.Redis.Client().HLen(t.Context(), protocol.FailedKey(mod)).Result(); n != 0 {
		t.Fatalf("%s holds %d records after clear", protocol.FailedKey(mod), n)
	}
	s.cliJSON(&rt, "retry", "--all")
	if rt.Total != 0 {
		t.Fatalf("retry --all after clear: %+v, want nothing", rt)
	}
	expectMetrics(t, s.metrics(), map[string]float64{
		`homeindex_queue_jobs{module="timeout-module",state="parked"}`: 0,
		`homeindex_results_total{outcome="merged"}`:                    1,
	})
	// The cleared documents keep their failure note (their history) and stay done.
	for _, id := range ids {
		if id == target.ID {
			continue
		}
		d, err := s.doc(id)
		if err != nil || d.Next != "" {
			t.Fatalf("%s: next %q (%v), want done", id, d.Next, err)
		}
	}
}
