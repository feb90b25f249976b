package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
	"github.com/homeindex/homeindex/sdk"
	"github.com/homeindex/homeindex/sdk/moduletest"
	"github.com/rs/zerolog"
)

// With runAsModule set, this test binary is the module (Prometheus's pattern).
const runAsModule = "CRASH_MODULE_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsModule) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func TestNoCrash(t *testing.T) {
	t.Parallel()
	o := moduletest.Run(t, module{}, moduletest.File("a.txt", "a"))[0]
	if !o.Ran || o.Err != "" || string(o.Files["version.json"]) != `{"version": 1}` {
		t.Errorf("outcome %+v", o)
	}
}

// TestCrashFreesShareToken (scenario 13): crash-module dies mid-run holding gpu; its entry
// expires after TIMEOUT and another module sharing gpu then finishes its file.
func TestCrashFreesShareToken(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb, ctx := srv.Client(), context.Background()
	dir := t.TempDir()
	shares := "- name: gpu\n  seconds: 1\n"

	// The crashing module, as a process.
	var stderr syncBuffer
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{runAsModule + "=1", "MODULE_NAME=crash-module", "MODULE_UID=u3", "CRASH=1", "TIMEOUT=1",
		"WORKER_ID=worker2", "RESOURCE_SHARES=" + shares, "REDIS_HOST=" + srv.Addr(),
		"FILES_DIRECTORY=" + dir, "METADATA_DIRECTORY=" + dir + "/metadata"}
	cmd.Stderr = &stderr
	rdb.RPush(ctx, "crash-module:run", `{"id": "c0ffee0000000001", "paths": {"crash.txt": 1.0}, "uid": "u3"}`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("crash-module did not die")
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "crashing") {
		t.Fatalf("exit code %d, stderr %s; want 1 and crashing", code, stderr.String())
	}
	if got, _ := rdb.LRange(ctx, "gpu:share", 0, -1).Result(); !slices.Equal(got, []string{"worker2"}) {
		t.Fatalf("gpu:share = %q, want the dead holder worker2", got)
	}
	if n, _ := rdb.LLen(ctx, "crash-module:run:processing").Result(); n != 1 {
		t.Errorf("crash-module:run:processing has %d items, want the crashed run's item for the reaper", n)
	}

	// Another module sharing gpu.
	cfg := sdk.Config{Module: "example-module", UID: "u1", Redis: redisconn.Endpoint{Addr: srv.Addr()},
		Timeout: time.Second, WorkerID: "worker1", Shares: []sdk.Share{{Name: "gpu", Slice: time.Second}},
		FilesDir: dir, MetadataDir: dir + "/metadata", Log: zerolog.NewTestWriter(t)}
	w, err := sdk.NewWorker(cfg, sdk.HandlerFuncs{RunFunc: func(context.Context, *sdk.Job) (sdk.Result, error) {
		return sdk.Result{Document: map[string]any{"note": "hello"}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- w.Serve(sctx) }()
	defer func() { stop(); <-served }()
	rdb.RPush(ctx, "example-module:run", `{"id": "c0ffee0000000002", "paths": {"ok.txt": 1.0}, "uid": "u1"}`)
	v, err := rdb.BLPop(ctx, 20*time.Second, protocol.DoneKey).Result()
	if err != nil {
		t.Fatalf("the other module never ran: %v", err)
	}
	if m, err := protocol.ParseDone([]byte(v[1])); err != nil || m.Module != "example-module" || m.Error != "" {
		t.Errorf("done %s: %v", v[1], err)
	}
	if got, _ := rdb.LRange(ctx, "gpu:share", 0, -1).Result(); slices.Contains(got, "worker2") {
		t.Errorf("gpu:share = %q still holds the dead worker", got)
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
