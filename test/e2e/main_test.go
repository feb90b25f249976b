// Package e2e is the end-to-end acceptance suite: every acceptance scenario of the module
// pipeline (S1–S15, one file each, named after it) against the real binaries (homeindexd and the example, timeout and crash
// modules, built once in TestMain), a real redis-server (append-only, its own temporary
// directory and loopback port), the real Meilisearch test binary where a test needs it, and a
// module written for the Python module runtime (docs/protocol.md). Every process's log is kept and printed when
// a test fails. Tests wait on conditions with deadlines, never on fixed sleeps.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// bin holds the paths of the binaries TestMain built.
var bin struct {
	homeindexd, example, timeout, crash string
	text                                string // the text module (text_module_test.go)
}

// repoRoot is the module root (two levels up from this package).
var repoRoot string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	dir, err := os.MkdirTemp("", "homeindex-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// The binaries get the race detector when the suite has it (go test -race): a data race
	// in a child process is reported in its log, which the harness checks (see proc).
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/homeindexd", "./cmd/example-module", "./cmd/timeout-module", "./cmd/crash-module", "./cmd/text-module")
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go %v: %v\n%s", args, err, out)
		return 1
	}
	bin.homeindexd = filepath.Join(dir, "homeindexd")
	bin.example = filepath.Join(dir, "example-module")
	bin.timeout = filepath.Join(dir, "timeout-module")
	bin.crash = filepath.Join(dir, "crash-module")
	bin.text = filepath.Join(dir, "text-module")
	return m.Run()
}
