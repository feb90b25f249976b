package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
)

// The process tests run this test binary as the module (Prometheus's pattern): with
// runAsModule set, TestMain calls main instead of the tests.
const runAsModule = "EXAMPLE_MODULE_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsModule) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// process is the module running as a child process.
type process struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan struct{}
}

func startModule(t *testing.T, env ...string) *process {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append([]string{runAsModule + "=1", "PATH=" + os.Getenv("PATH")}, env...)
	p := &process{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("module stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// exitCode waits for the process to end and returns its exit code.
func (p *process) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(30 * time.Second):
		t.Fatal("the module did not exit")
		return -1
	}
}

// TestFatalMisconfiguration (scenario 12): a MODULE_UID that MODULES does not give this
// module logs "fatal mis-configuration" and exits 1, before touching Redis.
func TestFatalMisconfiguration(t *testing.T) {
	t.Parallel()
	for _, modules := range []string{
		"- name: example-module\n  uid: good\n",
		"- name: other-module\n  uid: bad\n",
	} {
		p := startModule(t, "MODULE_NAME=example-module", "MODULE_UID=bad", "MODULES="+modules, "REDIS_HOST=127.0.0.1:1")
		if code := p.exitCode(t); code != 1 {
			t.Errorf("MODULES %q: exit code %d, want 1", modules, code)
		}
		if !strings.Contains(p.stderr.String(), "fatal mis-configuration") {
			t.Errorf("stderr %q does not say fatal mis-configuration", p.stderr.String())
		}
	}
}

// TestProcess: the binary serves an item as the daemon queues it, then exits 0 on SIGTERM.
func TestProcess(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb, ctx := srv.Client(), context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/hello.txt", []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startModule(t, "QUEUE_NAME=example-module", "MODULE_UID=u1", "MODULES=- name: example-module\n  uid: u1\n",
		"REDIS_HOST=redis://"+srv.Addr(), "FILES_DIRECTORY="+dir, "METADATA_DIRECTORY="+dir+"/metadata", "TIMEOUT=5")
	item, err := protocol.BuildItem("0123456789abcdef", []byte(`{"id":"0123456789abcdef","paths":{"hello.txt":1.0}}`), "u1",
		protocol.Job{Token: "ab", Attempt: 1, Since: 1})
	if err != nil {
		t.Fatal(err)
	}
	rdb.RPush(ctx, "example-module:check", item)
	v, err := rdb.BLPop(ctx, 20*time.Second, protocol.DoneKey).Result()
	if err != nil {
		t.Fatalf("no done message: %v", err)
	}
	m, err := protocol.ParseDone([]byte(v[1]))
	if err != nil || m.Error != "" || string(m.Content) != `"hello world"` || !strings.Contains(string(m.Document), `"note":"hello"`) {
		t.Errorf("done %s: %v", v[1], err)
	}
	if b, err := os.ReadFile(dir + "/metadata/by-id/0123456789abcdef/example-module/log.txt"); err != nil || !strings.Contains(string(b), "INF start attempt=1 path="+dir+"/hello.txt") {
		t.Errorf("log.txt %q, %v", b, err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t); code != 0 {
		t.Errorf("exit code after SIGTERM %d, want 0", code)
	}
	if n, err := rdb.LLen(ctx, "example-module:run:processing").Result(); err != nil || n != 0 {
		t.Errorf("run:processing %d, %v", n, err)
	}
	if _, err := rdb.LPop(ctx, protocol.DoneKey).Result(); !errors.Is(err, redis.Nil) {
		t.Errorf("extra done message (%v)", err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
