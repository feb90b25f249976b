// Package meilitest runs a real Meilisearch server for tests: the pinned 1.21 binary that
// scripts/install-meilisearch.sh installs, on a free loopback port, with a temporary database
// and a random master key. A missing binary fails the test; it never skips.
package meilitest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/freeport"
)

// EnvBinary names the environment variable that overrides the binary's path.
const EnvBinary = "MEILISEARCH_BIN"

// startTimeout bounds the wait for /health after a start.
const startTimeout = 30 * time.Second

// Server is one Meilisearch process owned by a test.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:<port>; it survives Restart.
	URL string
	// MasterKey is the master key the server runs with (32 hex characters).
	MasterKey string

	t       testing.TB
	bin     string
	args    []string // extra command-line flags, kept for Restart
	dir     string   // db, dumps and snapshots live here
	addr    string
	logPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has been waited for
}

// Start starts a server and registers its shutdown with t.Cleanup. The process log is
// printed if the test fails. args are extra command-line flags (such as
// "--max-indexing-threads", "1"), appended after the ones Start sets.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatalf("meilitest: %v", err)
	}
	key := make([]byte, 16)
	if _, err := rand.Read(key); err != nil {
		t.Fatalf("meilitest: master key: %v", err)
	}
	dir := t.TempDir()
	s := &Server{
		MasterKey: hex.EncodeToString(key),
		t:         t,
		bin:       bin,
		args:      args,
		dir:       dir,
		logPath:   filepath.Join(dir, "meilisearch.log"),
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			s.dumpLog()
		}
	})
	// A port picked by listening and closing can be taken before the server binds it;
	// try a few.
	var lastErr error
	for range 3 {
		addr, err := freeAddr()
		if err != nil {
			t.Fatalf("meilitest: %v", err)
		}
		s.addr, s.URL = addr, "http://"+addr
		if lastErr = s.start(); lastErr == nil {
			return s
		}
		s.Stop()
	}
	t.Fatalf("meilitest: start %s: %v", bin, lastErr)
	return nil
}

// Binary returns the path of the Meilisearch binary: $MEILISEARCH_BIN, else
// <repo root>/.cache/meilisearch/meilisearch. It fails if the file is not there.
func Binary() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvBinary, p, err)
		}
		return p, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, ".cache", "meilisearch", "meilisearch")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no Meilisearch binary at %s: run `make test` or scripts/install-meilisearch.sh (or set %s)", p, EnvBinary)
	}
	return p, nil
}

// repoRoot walks up from the working directory to the directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: cannot find the repository root")
		}
		dir = parent
	}
}

// freeAddr is an address for the next Meilisearch (see freeport for why not :0).
func freeAddr() (string, error) { return freeport.Addr() }

// start launches the process on s.addr and waits until /health answers.
func (s *Server) start() error {
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close() // the child keeps its own descriptor
	cmd := exec.Command(s.bin, append([]string{
		"--http-addr", s.addr,
		"--master-key", s.MasterKey,
		"--db-path", filepath.Join(s.dir, "data.ms"),
		"--dump-dir", filepath.Join(s.dir, "dumps"),
		"--snapshot-dir", filepath.Join(s.dir, "snapshots"),
		"--no-analytics",
		"--env", "development",
	}, s.args...)...)
	cmd.Dir = s.dir
	cmd.Env = cleanEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	// If the test binary dies, take the server with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	return s.waitHealthy(done)
}

// cleanEnv drops MEILI_* variables so the caller's environment cannot reconfigure the server.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MEILI_") {
			env = append(env, kv)
		}
	}
	return env
}

func (s *Server) waitHealthy(done <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/health", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-done:
			return fmt.Errorf("meilisearch exited during startup (log: %s)", s.logPath)
		case <-ctx.Done():
			return fmt.Errorf("meilisearch not healthy after %v (log: %s)", startTimeout, s.logPath)
		case <-tick.C:
		}
	}
}

// Stop kills the server and waits for it to exit. The database stays for Restart. Stopping a
// stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd, s.done = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// PID is the running server's process id (0 when stopped), e.g. to read its CPU time.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Restart stops the server if it runs and starts it again on the same address with the same
// database and key, waiting until it is healthy.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.t.Fatalf("meilitest: restart: %v", err)
	}
}

func (s *Server) dumpLog() {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		s.t.Logf("meilitest: read log: %v", err)
		return
	}
	const maxLog = 64 << 10
	if len(b) > maxLog {
		b = append([]byte("…\n"), b[len(b)-maxLog:]...)
	}
	s.t.Logf("meilitest: meilisearch log (%s):\n%s", s.logPath, b)
}
