package app

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/pipeline"
	"github.com/homeindex/homeindex/protocol"
)

// The wiring of a restart after a crash: the token the state directory recorded reaches the
// pipeline (pipeline.Config.Predecessor), which takes its dead predecessor's Redis lock over at
// once. The lock rules themselves (standby, takeover, recording the new token) are specified in
// internal/pipeline.
func TestRestartTakesItsDeadPredecessorsLock(t *testing.T) {
	p := newPipelineEnv(t, modulesYAML("m1"))
	p.open()
	rdb := p.redis.Client()
	if err := os.WriteFile(filepath.Join(p.state, pipeline.LockOwnerFile), []byte("this-host:1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(p.ctx, protocol.LockKey, "this-host:1:1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	pipe := p.app.NewPipeline(nil)
	runPipeline(t, pipe)
	select {
	case <-pipe.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("did not take over the dead predecessor's lock")
	}
	if holder, err := rdb.Get(p.ctx, protocol.LockKey).Result(); err != nil || holder != pipe.Owner() {
		t.Fatalf("lock holder %q (%v), want %q", holder, err, pipe.Owner())
	}
}

// The recorded token is trusted only while this process holds the state directory's lock:
// another live process on the directory means the token may be a live daemon's.
func TestPredecessorNeedsTheStateDirectoryLock(t *testing.T) {
	if !canLockStateDir {
		return // without flock (statelock_other.go) no token is ever trusted
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, pipeline.LockOwnerFile), []byte("this-host:1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, owns, release := predecessor(dir)
	if tok != "this-host:1:1" || !owns {
		t.Fatalf("token %q, owns %v with the directory free, want the recorded one, owned", tok, owns)
	}
	release()

	other := lockStateDir(filepath.Join(dir, processLockFile)) // a live daemon on the directory
	if other == nil {
		t.Fatal("could not take the state directory's lock")
	}
	defer other()
	tok, owns, release = predecessor(dir)
	defer release()
	if tok != "" || owns {
		t.Fatalf("token %q, owns %v while another process holds the directory, want none, not owned", tok, owns)
	}
}

// runPipeline runs pipe until the returned stop is called (stop waits for Run to return).
func runPipeline(t *testing.T, pipe *pipeline.Pipeline) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = pipe.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}
