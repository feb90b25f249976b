package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/ops"
)

// Change detection with the default cron (0 2 * * *) and the default SETTLE_TIME and
// REWALK_INTERVAL: every change reaches search promptly, from the watcher alone.
const promptly = 60 * time.Second

// newWatchStack is a stack with the daemon's change-detection defaults (the suite's stack
// syncs every second, which would hide the watcher), started, its start-up sync done.
func newWatchStack(t *testing.T, modules []module, kv ...string) *stack {
	t.Helper()
	env := append([]string{"CRON_EXPRESSION", "0 2 * * *", "SETTLE_TIME", "5s"}, kv...)
	s := newStack(t, modules, withDaemonEnv(env...))
	return s
}

// startWatching starts the daemon and waits for its start-up sync and its watcher.
func (s *stack) startWatching() ops.Status {
	s.t.Helper()
	s.Daemon.Start()
	var st ops.Status
	waitUntil(s.t, 60*time.Second, "the start-up sync and the watcher", func() error {
		var err error
		if st, err = s.status(); err != nil {
			return err
		}
		if st.Sync.Count < 1 || st.Watch == nil || st.Watch.Mode == "starting" {
			return fmt.Errorf("syncs %d, watch %+v", st.Sync.Count, st.Watch)
		}
		return nil
	})
	return st
}

// searchable returns a condition: path is (or with want false, is no longer) a search hit.
func (s *stack) searchable(rel string, want bool) func() error {
	return func() error {
		hits, err := s.searchCLI(fmt.Sprintf("paths_list = %q", rel), "")
		if err != nil {
			return err
		}
		if (len(hits) > 0) != want {
			return fmt.Errorf("%s: %d hits, want present=%v", rel, len(hits), want)
		}
		return nil
	}
}

// hasID returns a condition: a hit for rel has document id id.
func (s *stack) hasID(rel, id string) func() error {
	return func() error {
		hits, err := s.searchCLI(fmt.Sprintf("paths_list = %q", rel), "")
		if err != nil {
			return err
		}
		for _, h := range hits {
			if h.ID == id {
				return nil
			}
		}
		return fmt.Errorf("%s: no hit with id %s among %d", rel, id, len(hits))
	}
}

// within waits for cond no longer than promptly and logs how long it took.
func within(t *testing.T, what string, cond func() error) {
	t.Helper()
	start := time.Now()
	waitUntil(t, promptly, what, cond)
	t.Logf("%s: %.1f s", what, time.Since(start).Seconds())
}

func TestWatchNewFileThreeLevelsDeepSearchable(t *testing.T) {
	t.Parallel()
	s := newWatchStack(t, nil)
	s.write("top.txt", "already there")
	st := s.startWatching()
	if st.Watch.Mode != "inotify" || st.Watch.Fallback {
		t.Fatalf("watch status %+v, want every directory watched", st.Watch)
	}
	// The directory first, then its files: the sync its creation triggers must not be the last.
	deep := filepath.Join(s.Files, "photos", "2024", "trip")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	s.write("photos/2024/trip/beach.txt", "sand and sea")
	within(t, "a file three levels deep searchable", s.searchable("photos/2024/trip/beach.txt", true))
}

func TestWatchFileOnArchiveDriveSearchable(t *testing.T) {
	t.Parallel()
	s := newWatchStack(t, nil)
	s.plug("usb1", map[string]string{"old/notes.txt": "old notes"})
	s.startWatching()
	s.write("archive/usb1/a/b/c/new.txt", "on the drive, three levels down")
	within(t, "a file three levels deep on an archive drive searchable", s.searchable("archive/usb1/a/b/c/new.txt", true))
	// A drive plugged in after start is watched too.
	s.plug("usb2", map[string]string{"x/y/z/first.txt": "second drive"})
	within(t, "a drive plugged in after start searchable", s.searchable("archive/usb2/x/y/z/first.txt", true))
	s.write("archive/usb2/x/y/z/later.txt", "written after the drive came")
	within(t, "a new file on the later drive searchable", s.searchable("archive/usb2/x/y/z/later.txt", true))
}

func TestWatchChangedMovedDeletedFiles(t *testing.T) {
	t.Parallel()
	s := newWatchStack(t, nil)
	s.write("a/b/c/changed.txt", "first version")
	s.write("a/b/c/moved.txt", "moving content")
	s.write("a/b/c/deleted.txt", "doomed content")
	old := time.Now().Add(-time.Hour)
	for _, n := range []string{"changed", "moved", "deleted"} {
		p := filepath.Join(s.Files, "a", "b", "c", n+".txt")
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	s.startWatching()
	waitUntil(t, promptly, "the start-up sync indexed the files", s.searchable("a/b/c/deleted.txt", true))

	id := s.write("a/b/c/changed.txt", "second version, longer")
	within(t, "a changed file's new content searchable", s.hasID("a/b/c/changed.txt", id))

	if err := os.MkdirAll(filepath.Join(s.Files, "d", "e", "f"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(s.Files, "a/b/c/moved.txt"), filepath.Join(s.Files, "d/e/f/moved.txt")); err != nil {
		t.Fatal(err)
	}
	within(t, "a moved file searchable at its new path", s.hasID("d/e/f/moved.txt", docID("moving content")))
	waitUntil(t, promptly, "a moved file gone from its old path", s.searchable("a/b/c/moved.txt", false))

	if err := os.Remove(filepath.Join(s.Files, "a/b/c/deleted.txt")); err != nil {
		t.Fatal(err)
	}
	within(t, "a deleted file gone from search", s.searchable("a/b/c/deleted.txt", false))
}

// A file appended to every 300 ms for 4 s is not handed to the module while it grows; once it
// has settled it is, once, with its final content.
func TestWatchFileBeingWrittenWaitsUntilSettled(t *testing.T) {
	t.Parallel()
	s := newWatchStack(t, []module{{Name: "example-module", UID: "e1"}})
	s.startModule("example", bin.example, "example-module")
	s.startWatching()
	rel := "logs/2024/june/growing.txt"
	p := filepath.Join(s.Files, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	var content strings.Builder
	tick := time.NewTicker(300 * time.Millisecond)
	for i := range 14 {
		<-tick.C // the writer's pace, not a synchronisation
		line := fmt.Sprintf("line %d\n", i)
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		content.WriteString(line)
		if recs := s.records().forPath(rel); len(recs) > 0 {
			t.Fatalf("the module got the file while it was being written: %v", recs)
		}
	}
	tick.Stop()
	lastWrite := time.Now()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	id := docID(content.String())
	within(t, "the settled file handed to the module", func() error {
		for _, r := range s.records().forPath(rel) {
			if r.Phase == "run" && r.Result == "ok" {
				return nil
			}
		}
		return fmt.Errorf("no run of %s yet", rel)
	})
	for _, r := range s.records().forPath(rel) {
		if r.ID != id {
			t.Errorf("the module saw content %s, not the final %s: %v", r.ID, id, r)
		}
		if r.StartTime().Before(lastWrite) {
			t.Errorf("the module started before the last write (%v): %v", lastWrite.Format("15:04:05.000"), r)
		}
	}
	waitUntil(t, promptly, "the final content searchable", s.hasID(rel, id))
}

// `homeindexd sync` beside a running daemon asks the daemon (POST /api/sync) rather than
// writing the catalog too; a daemon that holds the lock but does not answer is an error.
func TestWatchSyncCommandBesideDaemon(t *testing.T) {
	t.Parallel()
	s := newWatchStack(t, nil)
	s.startWatching()
	rel := "imported/2019/album/copy.txt"
	s.write(rel, "copied with its old mtime")
	old := time.Now().Add(-24 * time.Hour)
	if err := os.Chtimes(filepath.Join(s.Files, filepath.FromSlash(rel)), old, old); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := s.cli("sync")
	if code != 0 || !strings.Contains(out, "the running daemon synced") || !strings.Contains(out, "added 1") {
		t.Fatalf("sync beside the daemon: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if err := s.searchable(rel, true)(); err != nil {
		t.Fatalf("right after `sync` returned: %v", err)
	}
	if !strings.Contains(s.Daemon.Log(), `"reason":"requested"`) {
		t.Error("the daemon's log has no requested sync")
	}

	// The lock is held, but HTTP_ADDR leads nowhere: refused, exit 1, naming the directory.
	env := append(s.Daemon.environ(), "HTTP_ADDR="+freeAddr(t))
	out, errOut, code = runWithEnv(t, env, "sync")
	if code != 1 || !strings.Contains(errOut, s.State) || !strings.Contains(errOut, "did not answer") {
		t.Fatalf("sync beside a silent daemon: exit %d, stdout %q, stderr %q; want exit 1 naming %s", code, out, errOut, s.State)
	}
}

// With WATCH_LIMIT=3 most directories are not watched: the re-walk fallback (every 30 s by
// default) still finds a new file, and status and metrics say the fallback is on.
func TestWatchTinyLimitFallsBackToRewalks(t *testing.T) {
	t.Parallel()
	s := newWatchStack(t, nil, "WATCH_LIMIT", "3")
	for i := range 10 {
		s.write(fmt.Sprintf("d%d/keep.txt", i), fmt.Sprintf("kept %d", i))
	}
	st := s.startWatching()
	w := st.Watch
	if w.Watches != 3 || w.Budget != 3 || !w.Fallback || w.Mode != "inotify+rewalk" || w.UnwatchedDirs == 0 {
		t.Fatalf("watch status %+v, want 3 watches and the re-walk fallback", w)
	}
	if !strings.Contains(s.Daemon.Log(), "change detection falls back to periodic re-walks") {
		t.Error("no log line about the fallback")
	}
	m := s.metrics()
	if m["homeindex_watch_fallback_active"] != 1 || m["homeindex_watch_budget"] != 3 || m["homeindex_watch_watches"] != 3 {
		t.Errorf("metrics: fallback %v budget %v watches %v", m["homeindex_watch_fallback_active"],
			m["homeindex_watch_budget"], m["homeindex_watch_watches"])
	}
	s.write("d9/deeper/still/found.txt", "in an unwatched directory")
	within(t, "a new file in an unwatched directory searchable", s.searchable("d9/deeper/still/found.txt", true))
}

func (rs recordSet) forPath(rel string) recordSet {
	return rs.where(func(r record) bool { return r.Path == rel })
}

// runWithEnv runs homeindexd with exactly env and returns its output and exit code.
func runWithEnv(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin.homeindexd, args...)
	cmd.Env = env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("homeindexd %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// The status page shows how changes are detected, and its "Sync now" button makes the daemon
// sync (the file below has an old mtime and sits where the watcher would take 5 s to report).
func TestWatchPageSyncNowButton(t *testing.T) {
	t.Parallel()
	s := newWatchStack(t, nil)
	br := startBrowser(t)
	s.startWatching()
	p := br.NewPage(1280, 800)
	p.Navigate("http://" + s.HTTPAddr + "/status")
	var line string
	waitUntil(t, 30*time.Second, "the change detection line", func() error {
		if err := p.Eval(`document.querySelector('[data-testid="watch"]').textContent`, &line); err != nil {
			return err
		}
		if !strings.HasPrefix(line, "Change detection: ") {
			return fmt.Errorf("watch line %q", line)
		}
		return nil
	})
	before := strings.Count(s.Daemon.Log(), `"reason":"requested"`)
	p.Click(`[data-testid="sync-now"]`)
	waitUntil(t, 30*time.Second, "a sync asked for by the button", func() error {
		if n := strings.Count(s.Daemon.Log(), `"reason":"requested"`); n <= before {
			return fmt.Errorf("%d requested syncs in the log", n)
		}
		return nil
	})
	var msg string
	waitUntil(t, 30*time.Second, "the page confirms", func() error {
		if err := p.Eval(`document.querySelector('[data-testid="message"]').textContent`, &msg); err != nil {
			return err
		}
		if msg != "Sync requested." {
			return fmt.Errorf("message %q", msg)
		}
		return nil
	})
	if probs := br.Problems(); len(probs) > 0 {
		t.Errorf("the page reported problems (console errors, exceptions, CSP violations):\n%s", strings.Join(probs, "\n"))
	}
}
