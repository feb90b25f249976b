package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/protocol"
)

// The core flow (scenarios 1 and 15) with a module written for the upstream Python runtime:
// testdata/python_module.py speaks only the documented protocol (LPOP, MULTI ZADD+RPUSH,
// ZSCORE/ZREM/LREM, BLPOP, RPUSH modules:done with the whole document) through Debian's
// python3-redis. Drives go first, markers flip pending → ready, and the module's output lands
// in document.json, the index and the chunk index, without the echoed core fields.
func TestPythonModuleCoreFlow(t *testing.T) {
	t.Parallel()
	python := pythonWithRedis(t)
	const mod = "python-module"
	s := newStack(t, []module{{Name: mod, UID: "py1"}}, withDaemonEnv("DISPATCH_WINDOW", "2"))
	ids := []string{
		s.write("aaa.txt", "a regular file"), s.write("docs/b.txt", "another regular file"),
		s.write("archive/usb/c.txt", "a file on a drive"), s.write("archive/usb/d/e.txt", "another file on a drive"),
	}
	s.Daemon.Start()
	waitUntil(t, 30*time.Second, "usb pending", s.markerIs("usb", "pending"))
	script := filepath.Join(repoRoot, "test", "e2e", "testdata", "python_module.py")
	p := newProc(t, s.Logs, "python", python, []string{script}, map[string]string{
		"QUEUE_NAME": mod, "MODULE_UID": "py1", "REDIS_HOST": "http://" + s.Redis.Addr(), "TIMEOUT": "10",
		"FILES_DIRECTORY": s.Files, "METADATA_DIRECTORY": s.Meta, "WORKER_ID": "python",
		"RECORD_FILE": filepath.Join(s.Record, "python.jsonl"),
	})
	p.Start()

	waitUntil(t, 60*time.Second, "every file through the Python module", s.docsDone(ids, func(d protocol.Document) error {
		if err := noted(d); err != nil {
			return err
		}
		raw, err := os.ReadFile(filepath.Join(s.Meta, "by-id", d.ID, "document.json"))
		if err != nil {
			return err
		}
		for _, k := range []string{`"uid"`, `"` + protocol.JobFieldPrefix} {
			if strings.Contains(string(raw), k) {
				return fmt.Errorf("the module's echoed %s kept in document.json", k)
			}
		}
		if len(d.Paths) != 1 || d.Paths[0].Mtime < 1e9 {
			return fmt.Errorf("paths %+v: the daemon's own, not the echo's", d.Paths)
		}
		return nil
	}))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))
	runs := s.records().runs()
	if got := runs.countBy(byPath); len(got) != len(ids) || len(runs) != len(ids) {
		t.Fatalf("runs per file %v, want one each of %d", got, len(ids))
	}
	assertAllBefore(t, "tier A before tier B", runs.onDrive(), runs.regular())
	waitUntil(t, 30*time.Second, "the output in the files and chunk indexes", func() error {
		for _, id := range ids {
			err := s.withIndex(func(idx search.Index) error {
				if ok, err := indexedWithNote(idx, id); err != nil || !ok {
					return fmt.Errorf("%s not indexed with its note (%v)", id, err)
				}
				if hits, err := chunkHits(idx, id, "hello"); err != nil || len(hits) != 1 {
					return fmt.Errorf("%s: %d chunks (%v)", id, len(hits), err)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	p.Stop()
}

// pythonWithRedis returns a Python 3 interpreter that can import redis: Debian's
// /usr/bin/python3 with python3-redis (scripts/install-python-redis.sh, run by make test),
// else python3 from PATH. A missing one fails the test.
func pythonWithRedis(t *testing.T) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err != nil {
			continue
		}
		if exec.Command(c, "-c", "import redis").Run() == nil {
			return c
		}
	}
	t.Fatalf("no python3 with the redis package among %v: run `make test` or scripts/install-python-redis.sh", candidates)
	return ""
}
