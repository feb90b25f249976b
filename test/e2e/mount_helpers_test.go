package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/homeindex/homeindex/internal/app"
	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/internal/ops"
)

// swapWithEmpty swaps dir with a new empty directory in one step (RENAME_EXCHANGE), as a
// mount that goes away leaves its empty mount point: no sync can see it half done. It returns
// where dir's content went (in the stack's directory, outside the files tree, on the same
// file system); swapBack undoes it.
func (s *stack) swapWithEmpty(t *testing.T, dir string) string {
	t.Helper()
	aside := filepath.Join(s.root, "unmounted-"+filepath.Base(dir))
	if err := os.Mkdir(aside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, aside, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE); err != nil {
		t.Fatalf("swap %s: %v", dir, err)
	}
	return aside
}

// swapBack brings a swapped-out directory's content back in one step and drops the empty one.
func swapBack(t *testing.T, dir, aside string) {
	t.Helper()
	if err := unix.Renameat2(unix.AT_FDCWD, aside, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE); err != nil {
		t.Fatalf("swap back %s: %v", dir, err)
	}
	if err := os.Remove(aside); err != nil {
		t.Fatal(err)
	}
}

// heldIs returns a condition: status names exactly these held directories (dir:reason).
func (s *stack) heldIs(want ...string) func() error {
	return func() error {
		st, err := s.status()
		if err != nil {
			return err
		}
		var got []string
		for _, h := range st.Missing.Held {
			got = append(got, h.Dir+":"+h.Reason)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("held %v, want %v", got, want)
		}
		return nil
	}
}

// missingIs returns a condition on status's missing part.
func (s *stack) missingIs(what string, ok func(ops.MissingStatus) bool) func() error {
	return func() error {
		st, err := s.status()
		if err != nil {
			return err
		}
		if !ok(st.Missing) {
			return fmt.Errorf("missing status %+v: want %s", st.Missing, what)
		}
		return nil
	}
}

// indexedIDs returns which of ids the search index holds.
func (s *stack) indexedIDs(ids ...string) (map[string]bool, error) {
	hits, err := s.searchCLI("", "")
	if err != nil {
		return nil, err
	}
	found := map[string]bool{}
	for _, h := range hits {
		found[h.ID] = true
	}
	out := map[string]bool{}
	for _, id := range ids {
		out[id] = found[id]
	}
	return out, nil
}

// allIndexed fails the test unless every id is in the index.
func (s *stack) allIndexed(t *testing.T, ids ...string) {
	t.Helper()
	got, err := s.indexedIDs(ids...)
	if err != nil {
		t.Fatal(err)
	}
	for id, ok := range got {
		if !ok {
			t.Errorf("document %s left the index", id)
		}
	}
}

// outputIntact fails the test unless each document keeps the example module's output.
func (s *stack) outputIntact(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := s.moduleFile(id, "example-module", "version.json"); err != nil {
			t.Errorf("module output of %s: %v", id, err)
		}
	}
}

// oneRunEach fails the test unless the example module ran exactly once per document.
func (s *stack) oneRunEach(t *testing.T, ids ...string) {
	t.Helper()
	runs := s.records().runs().countBy(func(r record) string { return r.ID })
	for _, id := range ids {
		if runs[id] != 1 {
			t.Errorf("document %s: %d module runs, want 1 (runs by id: %v)", id, runs[id], runs)
		}
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func execLookPath(name string) (string, error) { return exec.LookPath(name) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// stopAndVerify stops the daemon, applies what its outbox still holds, and checks that the
// catalog, the metadata directory and the index agree (missing documents included).
func (s *stack) stopAndVerify(t *testing.T) {
	t.Helper()
	s.Daemon.Stop()
	env := s.Daemon.Env
	cfg, err := config.Load(func(k string) string {
		if k == "HTTP_ADDR" {
			return "off"
		}
		return env[k]
	})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	ctx := context.Background()
	a, err := app.Open(ctx, cfg, zerolog.Nop())
	if err != nil {
		t.Fatalf("open the daemon's stores: %v", err)
	}
	defer a.Close()
	if _, err := a.Outbox.Drain(ctx); err != nil {
		t.Fatalf("drain: %v", err)
	}
	problems, err := a.Verify(ctx)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if len(problems) > 0 {
		t.Fatalf("catalog, metadata directory and index disagree:\n%s", strings.Join(problems, "\n"))
	}
}
