package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/ops"
	"github.com/homeindex/homeindex/protocol"
)

// With Redis unreachable the pipeline state carries the reason and since when, in
// /api/status and `homeindexd status` alike.
func TestStatusSaysWhyRedisIsDown(t *testing.T) {
	t.Parallel()
	const mod = "example-module"
	s := newStack(t, []module{{Name: mod, UID: "1"}}, withDaemonEnv("REDIS_HOST", "redis://"+freeAddr(t)))
	s.write("a.txt", "file a")
	s.Daemon.Start()
	waitUntil(t, 60*time.Second, "status naming the unreachable Redis", func() error {
		st, err := s.status()
		if err != nil {
			return err
		}
		p := st.Pipeline
		if p.State != ops.PipelineStarting || !strings.Contains(p.Reason, "redis unreachable") || p.Since == nil {
			return fmt.Errorf("pipeline %+v", p)
		}
		return nil
	})
	var api ops.Status
	getJSON(t, s.HTTPAddr, "/api/status", &api)
	if !strings.Contains(api.Pipeline.Reason, "redis unreachable") || api.Pipeline.Since == nil {
		t.Fatalf("/api/status pipeline %+v", api.Pipeline)
	}
}

// A drive whose file was parked is ready_with_failures in status and metrics while its marker
// says ready; a retried job still running is not done, and it counts as done once, when its
// result is merged.
func TestStatusParkedDriveAndRetryCountedOnce(t *testing.T) {
	t.Parallel()
	const mod = "timeout-module"
	s := newStack(t, []module{{Name: mod, UID: "t1"}}, withDaemonEnv("MAX_ATTEMPTS", "1"))
	id := s.plug("usb", map[string]string{"poison.txt": "poison"})["archive/usb/poison.txt"]
	s.Daemon.Start()
	worker := s.startModule("timeout", bin.timeout, mod, "TIMEOUT", "0.3", "SLEEP", "30")
	waitUntil(t, 60*time.Second, "the file parked, its drive ready_with_failures", func() error {
		st, err := s.status()
		if err != nil {
			return err
		}
		if m := moduleOf(st, mod); m.Parked != 1 || m.Done != 0 {
			return fmt.Errorf("module %+v", m)
		}
		if len(st.Drives) != 1 || st.Drives[0].State != ops.DriveReadyWithFailures || st.Drives[0].Marker != "ready" {
			return fmt.Errorf("drives %+v", st.Drives)
		}
		return nil
	})
	if state, _ := s.marker("usb"); state != "ready" {
		t.Fatalf("marker %q, want ready (the file keeps two states)", state)
	}
	expectMetrics(t, s.metrics(), map[string]float64{
		`homeindex_drive_state{drive="usb",state="ready_with_failures"}`: 1,
		`homeindex_drive_state{drive="usb",state="ready"}`:               0,
	})

	// Retry while the module still hangs: the job runs (and parks) again, never done.
	worker.Stop()
	worker.Start()
	var rt ops.Retried
	s.cliJSON(&rt, "retry", "--all")
	if rt.Total != 1 {
		t.Fatalf("retry: %+v", rt)
	}
	for range 5 {
		if m := moduleOf(s.mustStatus(), mod); m.Done != 0 {
			t.Fatalf("a retried job not merged counts as done: %+v", m)
		}
	}
	worker.Stop()
	worker.Env["SLEEP"] = "0"
	worker.Start()
	s.cliJSON(&rt, "retry", "--all") // it may have parked again meanwhile
	waitUntil(t, 60*time.Second, "merged, done once, the drive ready", func() error {
		st, err := s.status()
		if err != nil {
			return err
		}
		m := moduleOf(st, mod)
		if m.Parked == 1 && m.Done == 0 {
			// The run the hanging worker had started parks when its deadline passes, which
			// can come after the retry above: retry it again, as an operator would.
			s.cliJSON(&rt, "retry", "--all")
			return fmt.Errorf("parked after the retry; retried again: %+v", m)
		}
		if m.Done != 1 || m.Parked != 0 || m.Queued+m.InFlight+m.Merging+m.Recovering != 0 {
			return fmt.Errorf("module %+v", m)
		}
		if st.Drives[0].State != ops.DriveReady {
			return fmt.Errorf("drives %+v", st.Drives)
		}
		return nil
	})
	if d, err := s.doc(id); err != nil || d.Next != "" {
		t.Fatalf("document %+v %v", d, err)
	}
}

// After kill -9 with jobs dispatched in the catalog whose Redis items never arrived (the
// crash fell between the commit and the push), status never shows that work as nothing
// waiting: it is recovering until the restarted daemon dispatches it again, at start, and
// everything completes.
func TestStatusAfterKillAndRestartShowsRecovering(t *testing.T) {
	t.Parallel()
	const mod = "example-module"
	s := newStack(t, []module{{Name: mod, UID: "1"}})
	var ids []string
	for i := range 12 {
		ids = append(ids, s.write(fmt.Sprintf("d/f%02d.txt", i), fmt.Sprint("file ", i)))
	}
	s.Daemon.Start()
	waitUntil(t, 60*time.Second, "a window dispatched", func() error {
		q, err := s.queuedIDs(mod)
		if err != nil || len(q) != 4 {
			return fmt.Errorf("%d queued (%v)", len(q), err)
		}
		return nil
	})
	s.Daemon.Kill()
	// The pushes of that window never happened, as far as Redis knows.
	rdb := s.Redis.Client()
	if err := rdb.Del(t.Context(), protocol.CheckKey(mod), protocol.JobsKey(mod)).Err(); err != nil {
		t.Fatal(err)
	}
	s.Daemon.Start()
	check := func(st ops.Status) error {
		m := moduleOf(st, mod)
		// The catalog and Redis are read one after the other, so a dispatch between the two
		// reads may count a job twice; never may a document be counted nowhere.
		if backlog := m.Waiting + m.Recovering + m.Queued + m.InFlight + m.Merging; backlog+m.Done < int64(len(ids)) {
			return fmt.Errorf("status accounts for %d of %d documents: %+v", backlog+m.Done, len(ids), m)
		}
		return nil
	}
	waitUntil(t, 60*time.Second, "the window back in Redis", func() error {
		st, err := s.status()
		if err != nil {
			return err
		}
		if err := check(st); err != nil {
			t.Fatal(err)
		}
		if q, err := s.queuedIDs(mod); err != nil || len(q) != 4 {
			return fmt.Errorf("%d queued (%v)", len(q), err)
		}
		return nil
	})
	if !strings.Contains(s.Daemon.LogSinceStart(), "forgot job rows Redis no longer has") {
		t.Fatal("the orphaned rows were not recovered by the start-up audit")
	}
	s.startModule("example", bin.example, mod)
	waitUntil(t, 60*time.Second, "every file processed", s.docsDone(ids, noted))
	if err := check(s.mustStatus()); err != nil {
		t.Fatal(err)
	}
}
