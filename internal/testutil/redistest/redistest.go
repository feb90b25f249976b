// Package redistest starts real redis-server processes for tests: one per call, on a free
// 127.0.0.1 port, with its own data directory, killed when the test ends. It never touches a
// shared Redis (port 6379).
//
// WithACL adds ACL users (and a password for the default user), WithTLS serves TLS only with a
// CA made for the test (options_acl_tls.go).
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/homeindex/homeindex/internal/testutil/freeport"
)

// startTimeout bounds how long a server may take to answer PING after it is launched.
const startTimeout = 10 * time.Second

// Option changes how Start launches the server.
type Option func(*config)

type config struct {
	appendOnly bool
	args       []string
	sec        security
}

// WithAppendOnly turns on AOF persistence (appendfsync always), so Restart after Kill keeps
// every acknowledged write.
func WithAppendOnly() Option { return func(c *config) { c.appendOnly = true } }

// WithArgs adds redis-server command-line arguments, e.g. "--maxmemory-policy", "allkeys-lru".
func WithArgs(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// Server is one redis-server process owned by a test.
type Server struct {
	tb   testing.TB
	cfg  config
	dir  string
	port int
	bin  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
	out    *lockedBuffer
	client *redis.Client
}

// Start launches redis-server from PATH and waits until it answers PING. The test fails (never
// skips) when redis-server is missing. The server is killed in t.Cleanup.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatalf("redis-server not found in PATH (%v): `make test` installs it", err)
	}
	s := &Server{tb: tb, dir: tb.TempDir(), bin: bin}
	for _, o := range opts {
		o(&s.cfg)
	}
	tb.Cleanup(s.stop)
	if err := s.prepareSecurity(); err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	// A free port can be taken by someone else before redis binds it: try a few.
	var lastErr error
	for range 5 {
		if s.port, err = freePort(); err != nil {
			tb.Fatalf("redistest: %v", err)
		}
		if lastErr = s.launch(); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		tb.Fatalf("redistest: %v", lastErr)
	}
	s.client = redis.NewClient(s.clientOptions())
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Client returns a go-redis client for assertions and seeding; it is closed at cleanup.
func (s *Server) Client() *redis.Client { return s.client }

// Kill sends SIGKILL and waits for the process to exit.
func (s *Server) Kill() {
	s.tb.Helper()
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// Restart starts the server again on the same port and directory (after Kill, or it kills
// first). With WithAppendOnly the data set comes back.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	if err := s.launch(); err != nil {
		s.tb.Fatalf("redistest: restart: %v", err)
	}
}

// Flush deletes every key (FLUSHALL), as an operator or a lost data set would.
func (s *Server) Flush() {
	s.tb.Helper()
	if err := s.client.FlushAll(context.Background()).Err(); err != nil {
		s.tb.Fatalf("redistest: flushall: %v", err)
	}
}

func (s *Server) args() []string {
	a := []string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--daemonize", "no", "--logfile", "", "--protected-mode", "yes",
	}
	if s.cfg.appendOnly {
		a = append(a, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		a = append(a, "--appendonly", "no")
	}
	a = append(a, s.securityArgs()...)
	return append(a, s.cfg.args...)
}

func (s *Server) launch() error {
	out := &lockedBuffer{}
	cmd := exec.Command(s.bin, s.args()...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited, s.out = cmd, exited, out
	s.mu.Unlock()

	po := s.clientOptions()
	po.DialTimeout = time.Second
	probe := redis.NewClient(po)
	defer probe.Close()
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := probe.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("redis-server on port %d exited: %s", s.port, out.String())
		case <-deadline.C:
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("redis-server on port %d: no PING answer within %v: %v", s.port, startTimeout, err)
		case <-tick.C:
		}
	}
}

func (s *Server) stop() {
	if s.client != nil {
		_ = s.client.Close()
	}
	s.Kill()
	if s.tb.Failed() {
		s.mu.Lock()
		out := s.out
		s.mu.Unlock()
		if out != nil {
			s.tb.Logf("redis-server log (%s):\n%s", filepath.Base(s.dir), out.String())
		}
	}
}

// freePort is a port for the next redis-server (see freeport for why not :0).
func freePort() (int, error) { return freeport.Port() }

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
