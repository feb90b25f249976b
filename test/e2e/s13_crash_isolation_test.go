package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// Scenario 13, parallel modules and crash isolation: two modules share a gpu token; one
// crashes mid-run while holding it. The other keeps running, takes the token over once the
// dead holder's entry has expired (its TTL is its TIMEOUT) and finishes every file, including
// files added after the crash, which need the token again.
func TestS13CrashingModuleFreesItsShareToken(t *testing.T) {
	t.Parallel()
	const (
		mod    = "example-module"
		ttl    = 2 * time.Second // the crashing worker's TIMEOUT, hence its share entries' TTL
		shares = "- name: gpu\n  seconds: 1\n"
	)
	s := newStack(t, []module{{Name: mod, UID: "e1"}})
	rdb, ctx := s.Redis.Client(), context.Background()
	ids := []string{s.write("a.txt", "file a"), s.write("archive/usb/b.txt", "file b"), s.write("c.txt", "file c")}
	// crash-module is not in the daemon's chain: it gets one job directly, as in upstream's test.
	crashItem := `{"id": "c0ffee0000000001", "paths": {"a.txt": 1.0}, "uid": "c1"}`
	if err := rdb.RPush(ctx, "crash-module:run", crashItem).Err(); err != nil {
		t.Fatal(err)
	}
	s.Daemon.Start()
	survivor := s.startModule("survivor", bin.example, mod, "RESOURCE_SHARES", shares, "TIMEOUT", "2")
	crasher := s.startModule("crasher", bin.crash, "crash-module", "MODULE_UID", "c1", "MODULES", "",
		"CRASH", "1", "RESOURCE_SHARES", shares, "TIMEOUT", fmt.Sprint(ttl.Seconds()))

	if code := crasher.WaitExit(30 * time.Second); code != 1 {
		t.Fatalf("crash-module exit code %d, want 1", code)
	}
	crashed := time.Now()
	if !strings.Contains(crasher.Log(), "crashing") {
		t.Fatal("crash-module did not log crashing")
	}
	// It died in Run, which it can only enter holding the token: the token is the dead worker's.
	if head, err := rdb.LIndex(ctx, protocol.ShareKey("gpu"), 0).Result(); err != nil || head != "crasher" {
		t.Fatalf("gpu token held by %q (%v) right after the crash, want the dead worker", head, err)
	}

	// New files need the token again.
	more := []string{s.write("d.txt", "file d"), s.write("archive/usb/e.txt", "file e")}
	all := append(ids, more...)
	var freed time.Time
	waitUntil(t, 30*time.Second, "the dead worker's token freed", func() error {
		queue, err := rdb.LRange(ctx, protocol.ShareKey("gpu"), 0, -1).Result()
		if err != nil || slices.Contains(queue, "crasher") {
			return fmt.Errorf("gpu queue %v (%v)", queue, err)
		}
		freed = time.Now()
		return nil
	})
	waitUntil(t, 60*time.Second, "every file done by the surviving module", s.docsDone(all, noted))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))

	// The dead worker's entry could be up to one TTL old at the crash; the waiting worker evicts
	// it on its next look after that. Generous slack for a loaded machine.
	if d := freed.Sub(crashed); d > ttl+3*time.Second {
		t.Fatalf("token freed %v after the crash, want within its TTL (%v) plus slack", d, ttl)
	}
	if ttls, err := rdb.ZRange(ctx, protocol.ShareTTLKey("gpu"), 0, -1).Result(); err != nil || slices.Contains(ttls, "crasher") {
		t.Fatalf("gpu ttl set %v (%v) still has the dead worker", ttls, err)
	}
	runs := s.records().runs()
	after := runs.where(func(r record) bool { return r.StartTime().After(crashed) })
	if len(after.where(func(r record) bool { return r.Path == "d.txt" || r.Path == "archive/usb/e.txt" })) != 2 {
		t.Fatalf("runs after the crash:%v; want the two new files", after)
	}
	if got := runs.countBy(byPath); len(got) != len(all) || len(runs) != len(all) {
		t.Fatalf("runs per file %v, want one each of %d", got, len(all))
	}
	if !survivor.Running() {
		t.Fatal("the surviving module exited")
	}
}
