package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// Redis is a bus (DESIGN invariant 2): an outage while homeindexd prepares the queues at start
// (here while it purges 20000 items of an old uid, which takes a moment) must not stop it;
// once Redis is back it finishes preparing, becomes ready and processes the files.
func TestRedisOutageAtStartDoesNotStopTheDaemon(t *testing.T) {
	t.Parallel()
	const mod = "example-module"
	s := newStack(t, []module{{Name: mod, UID: "new"}})
	ids := []string{s.write("a.txt", "file a"), s.write("archive/usb/b.txt", "file b")}
	rdb, ctx := s.Redis.Client(), context.Background()
	const stale = 20000
	for i := 0; i < stale; i += 1000 {
		pipe := rdb.Pipeline()
		for j := i; j < i+1000; j++ {
			pipe.RPush(ctx, protocol.CheckKey(mod), fmt.Sprintf(`{"id": "%016x", "paths": {"old.txt": 1.0}, "uid": "old"}`, j))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s.Daemon.Start()
	waitUntil(t, 30*time.Second, "the start-up purge under way", func() error {
		if n, err := rdb.LLen(ctx, protocol.CheckKey(mod)).Result(); err != nil || n >= stale {
			return fmt.Errorf("%d items in %s (%v)", n, protocol.CheckKey(mod), err)
		}
		return nil
	})
	s.Redis.Kill()
	// Long enough for every Redis retry to give up: two more syncs (one a second, without Redis).
	syncs := strings.Count(s.Daemon.LogSinceStart(), `"message":"completed file sync"`)
	waitUntil(t, 30*time.Second, "two syncs during the outage", func() error {
		if !s.Daemon.Running() {
			return nil // judged below
		}
		if n := strings.Count(s.Daemon.LogSinceStart(), `"message":"completed file sync"`); n < syncs+2 {
			return fmt.Errorf("%d syncs since the outage", n-syncs)
		}
		return nil
	})
	if !s.Daemon.Running() {
		t.Fatalf("homeindexd exited (code %d) because Redis went away while it prepared the queues", s.Daemon.ExitCode())
	}
	s.Redis.Restart()
	waitUntil(t, 60*time.Second, "ready with the stale items purged and the files queued", func() error {
		if !s.Daemon.Running() {
			t.Fatalf("homeindexd exited (code %d) after the outage", s.Daemon.ExitCode())
		}
		if err := expectStatus(s.HTTPAddr, "/readyz", 200, "redis"); err != nil {
			return err
		}
		q, err := s.queuedIDs(mod)
		if err != nil || len(q) != len(ids) {
			return fmt.Errorf("%d items queued (%v), want the %d files only", len(q), err, len(ids))
		}
		return nil
	})
	s.startModule("example", bin.example, mod)
	waitUntil(t, 30*time.Second, "every file processed", s.docsDone(ids, noted))
}
