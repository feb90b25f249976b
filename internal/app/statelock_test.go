package app

import (
	"context"
	"github.com/homeindex/homeindex/internal/pipeline"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// A restart after a crash (kill -9 leaves the Redis lock to expire) takes the lock over at
// once when the lock holds the token this state directory recorded; a lock held by anyone
// else is waited for.
func TestRestartTakesItsDeadPredecessorsLock(t *testing.T) {
	p := newPipelineEnv(t, modulesYAML("m1"))
	p.open()
	rdb := p.redis.Client()
	// Someone else's lock, valid for a minute: this daemon must wait as a standby.
	if err := rdb.Set(p.ctx, protocol.LockKey, "other-host:1:1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.state, pipeline.LockOwnerFile), []byte("this-host:1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pipe := p.app.NewPipeline(nil)
	stop := runPipeline(t, pipe)
	select {
	case <-pipe.Ready():
		t.Fatal("took a lock held by another daemon")
	case <-time.After(500 * time.Millisecond): // bounded observation that it stays standby
	}
	stop()

	// The lock holds the token this state directory's previous process recorded: taken at once.
	if err := rdb.Set(p.ctx, protocol.LockKey, "this-host:1:1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	pipe = p.app.NewPipeline(nil)
	stop = runPipeline(t, pipe)
	defer stop()
	select {
	case <-pipe.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("did not take over the dead predecessor's lock")
	}
	holder, err := rdb.Get(p.ctx, protocol.LockKey).Result()
	if err != nil || holder != pipe.Owner() {
		t.Fatalf("lock holder %q (%v), want %q", holder, err, pipe.Owner())
	}
	b, err := os.ReadFile(filepath.Join(p.state, pipeline.LockOwnerFile))
	if err != nil || strings.TrimSpace(string(b)) != pipe.Owner() {
		t.Fatalf("recorded owner %q (%v), want %q", b, err, pipe.Owner())
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
