package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/homeindex/homeindex/protocol"
)

// Scenario 11, queue items with a stale uid: items left by an older module version at the head
// of the queues are logged ("uid mismatch") and set aside for UID_RETRY_SECONDS without
// starving the good items queued behind them, which all finish well within that time; once
// their time is up the daemon drops them, and every file is processed exactly once.
//
// The daemon is stopped while the stale items are planted and the module works through the
// queue: a running daemon drops stale heads itself every reap pass and would race the module.
func TestS11StaleUIDItemsDoNotStarveGoodOnes(t *testing.T) {
	t.Parallel()
	const mod, uidRetry = "example-module", 6 * time.Second
	s := newStack(t, []module{{Name: mod, UID: "new"}}, withDaemonEnv("DISPATCH_WINDOW", "8"))
	rdb, ctx := s.Redis.Client(), context.Background()
	var ids []string
	for i := range 6 {
		ids = append(ids, s.write(fmt.Sprintf("r%d.txt", i), fmt.Sprintf("regular file %d", i)))
	}
	s.Daemon.Start()
	waitUntil(t, 30*time.Second, "the good items queued", func() error {
		if n, err := rdb.LLen(ctx, protocol.CheckKey(mod)).Result(); err != nil || n != int64(len(ids)) {
			return fmt.Errorf("%d items in %s (%v)", n, protocol.CheckKey(mod), err)
		}
		return nil
	})
	s.Daemon.Stop()

	// Items an older module version left: as this daemon builds them (job fields) and as the
	// upstream core did (Python spacing, no job fields), all with uid "old".
	stale := map[string]string{}
	for i, id := range ids[:3] {
		item, err := protocol.BuildItem(id, []byte(fmt.Sprintf(`{"id":%q,"paths":{"r%d.txt":1.0}}`, id, i)), "old",
			protocol.Job{Token: fmt.Sprintf("01d%d", i), Attempt: 1, Since: time.Now().UnixMilli()})
		if err != nil {
			t.Fatal(err)
		}
		stale[item] = protocol.CheckKey(mod)
	}
	stale[fmt.Sprintf(`{"id": %q, "paths": {"r3.txt": 1.0}, "uid": "old"}`, ids[3])] = protocol.CheckKey(mod)
	stale[fmt.Sprintf(`{"id": %q, "paths": {"r5.txt": 1.0}, "uid": "old"}`, ids[5])] = protocol.RunKey(mod)
	for item, key := range stale {
		if err := rdb.LPush(ctx, key, item).Err(); err != nil {
			t.Fatal(err)
		}
	}
	started := time.Now()
	worker := s.startModule("example", bin.example, mod, "UID_RETRY_SECONDS", fmt.Sprint(uidRetry.Seconds()))
	waitUntil(t, 30*time.Second, "the good items run", func() error {
		if n := len(s.records().runs().ok()); n < len(ids) {
			return fmt.Errorf("%d runs", n)
		}
		return nil
	})
	runs := s.records().runs()
	if last := runs[len(runs)-1]; last.EndTime().After(started.Add(uidRetry)) {
		t.Fatalf("the good items waited for the stale ones: the last ended %v after the module started (UID_RETRY_SECONDS %v):%v",
			last.EndTime().Sub(started), uidRetry, runs)
	}
	if n := strings.Count(worker.Log(), "uid mismatch"); n < len(stale) {
		t.Fatalf("%d uid mismatch warnings, want one per stale item (%d)", n, len(stale))
	}
	for item, key := range stale {
		score, err := rdb.ZScore(ctx, protocol.TimeoutsKey, protocol.TimeoutMember(key, item)).Result()
		if err != nil || epoch(score).Before(time.Now()) {
			t.Fatalf("stale item %s not set aside with a future deadline (score %v, %v)", item, score, err)
		}
	}

	// The daemon merges the good results, then drops the stale items once their time is up.
	s.Daemon.Start()
	waitUntil(t, 30*time.Second, "every file through the chain", s.docsDone(ids, noted))
	waitUntil(t, 30*time.Second, "the stale items dropped", func() error {
		if n := strings.Count(s.Daemon.Log(), `"message":"queue item dropped"`); n < len(stale) {
			return fmt.Errorf("the daemon reported %d stale items dropped, want %d", n, len(stale))
		}
		for item, key := range stale {
			for _, k := range []string{key, protocol.ProcessingKey(key)} {
				if pos, err := rdb.LPos(ctx, k, item, redis.LPosArgs{}).Result(); err == nil {
					return fmt.Errorf("stale item still in %s at %d", k, pos)
				}
			}
			if _, err := rdb.ZScore(ctx, protocol.TimeoutsKey, protocol.TimeoutMember(key, item)).Result(); err == nil {
				return fmt.Errorf("stale item still in %s", protocol.TimeoutsKey)
			}
		}
		return nil
	})
	if got := s.records().runs().countBy(byPath); len(got) != len(ids) {
		t.Fatalf("runs per file %v, want one each", got)
	}
	for path, n := range s.records().runs().countBy(byPath) {
		if n != 1 {
			t.Fatalf("%s ran %d times, want once", path, n)
		}
	}
}

// Scenario 12, wrong MODULE_UID: a module whose uid (or name) is not the one MODULES gives it
// logs "fatal mis-configuration" and exits 1 without touching the queues; the daemon carries
// on, and a correctly configured module then processes the files.
func TestS12WrongModuleUIDExitsFatally(t *testing.T) {
	t.Parallel()
	const mod = "example-module"
	s := newStack(t, []module{{Name: mod, UID: "right"}})
	ids := []string{s.write("a.txt", "file a"), s.write("archive/usb/b.txt", "file b")}
	s.Daemon.Start()
	for _, tc := range []struct{ worker, name, uid string }{
		{"wrong-uid", mod, "wrong"},
		{"unknown-name", "other-module", "right"},
	} {
		p := s.startModule(tc.worker, bin.example, tc.name, "MODULE_UID", tc.uid)
		if code := p.WaitExit(30 * time.Second); code != 1 {
			t.Fatalf("%s: exit code %d, want 1", tc.worker, code)
		}
		if !strings.Contains(p.Log(), "fatal mis-configuration") {
			t.Fatalf("%s: no fatal mis-configuration in its log", tc.worker)
		}
	}
	if len(s.records()) != 0 {
		t.Fatalf("a misconfigured module worked:%v", s.records())
	}
	if !s.Daemon.Running() {
		t.Fatal("homeindexd exited")
	}
	s.startModule("example", bin.example, mod)
	waitUntil(t, 30*time.Second, "the files processed by a correct module", s.docsDone(ids, noted))
}

// Scenario 11, the daemon's side: items of an old uid that a module has set aside (they wait
// in its processing list for UID_RETRY_SECONDS, 10 minutes by default) must not take the
// module's dispatch window, or nothing new is dispatched to it until they expire: new files
// are processed at once.
func TestS11SetAsideStaleItemsDoNotBlockDispatch(t *testing.T) {
	t.Parallel()
	const mod = "example-module"
	s := newStack(t, []module{{Name: mod, UID: "new"}}) // DISPATCH_WINDOW 4
	rdb, ctx := s.Redis.Client(), context.Background()
	s.Daemon.Start()
	worker := s.startModule("example", bin.example, mod) // UID_RETRY_SECONDS: the default
	waitUntil(t, 30*time.Second, "the daemon ready", func() error { return expectStatus(s.HTTPAddr, "/readyz", 200, "redis") })
	// Stopped while the stale items are planted: a running daemon drops stale heads itself.
	s.Daemon.Stop()
	const stale = 6
	for i := range stale {
		item := fmt.Sprintf(`{"id": "%016x", "paths": {"old%d.txt": 1.0}, "uid": "old"}`, i, i)
		if err := rdb.RPush(ctx, protocol.CheckKey(mod), item).Err(); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, 30*time.Second, "the stale items set aside", func() error {
		n, err := rdb.LLen(ctx, protocol.CheckProcessingKey(mod)).Result()
		if err != nil || n != stale || strings.Count(worker.Log(), "uid mismatch") < stale {
			return fmt.Errorf("%d items set aside (%v)", n, err)
		}
		return nil
	})

	s.Daemon.Start()
	var ids []string
	for i := range 6 {
		ids = append(ids, s.write(fmt.Sprintf("new%d.txt", i), fmt.Sprintf("new file %d", i)))
	}
	waitUntil(t, 30*time.Second, "the new files processed while stale items are set aside", s.docsDone(ids, noted))
}
