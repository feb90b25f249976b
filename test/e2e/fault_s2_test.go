package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
)

// S2: homeindexd runs as an ACL user limited to its own keys and the
// commands it sends (the README's line), an SDK module as a user limited to its queues, the
// timeouts set and pushing to modules:done (the README's line). The full flow passes with no
// NOPERM anywhere; then the module's user tries to touch core keys, another module's queue
// and the results of others, and gets NOPERM every time, changing nothing; the daemon's user
// cannot run KEYS, FLUSHALL, CONFIG or ACL either (DEBUG is off in the server's own defaults).
func TestFaultS2LeastPrivilegeACL(t *testing.T) {
	t.Parallel()
	const mod = "example-module"
	daemonPW, modulePW := qsSecret(t), qsSecret(t)
	srv := redistest.Start(t, redistest.WithAppendOnly(),
		redistest.WithACL(daemonACLRules("homeindexd", daemonPW), moduleACLRules(mod, modulePW, mod)))
	s := newStack(t, []module{{Name: mod, UID: "e1"}}, withRedis(srv, srv.URL("homeindexd", daemonPW)), withDaemonEnv("DISPATCH_WINDOW", "32"))
	n := qsSize(20, 1000)
	var ids []string
	for i := range n {
		rel := fmt.Sprintf("d%02d/f%04d.txt", i%7, i)
		if i%5 == 0 {
			rel = fmt.Sprintf("archive/usb/f%04d.txt", i)
		}
		ids = append(ids, s.write(rel, fmt.Sprintf("s2 file %d", i)))
	}
	started := time.Now()
	s.Daemon.Start()
	s.startModule("worker1", bin.example, mod, qsModuleEnv(srv, srv.URL(mod, modulePW))...)
	waitUntil(t, time.Duration(60+n/4)*time.Second, "every file enriched with least-privilege users", s.docsDone(ids, noted))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))
	t.Logf("S2: %d files with ACL users (daemon and module) in %v", n, time.Since(started).Round(time.Millisecond))
	ctx, admin := context.Background(), srv.Client()
	aclLog := func() []any {
		t.Helper()
		log, err := admin.Do(ctx, "ACL", "LOG").Slice()
		if err != nil {
			t.Fatal(err)
		}
		return log
	}
	if log := aclLog(); len(log) != 0 {
		t.Fatalf("ACL LOG after the flow has %d entries, want none: %v", len(log), log)
	}

	// The module's user goes rogue.
	core := func() map[string]string {
		out := map[string]string{}
		for _, k := range []string{protocol.LockKey, protocol.EpochKey} {
			out[k] = admin.Get(ctx, k).Val()
		}
		for _, k := range []string{protocol.DoneKey, protocol.DoneProcessingKey, protocol.QuarantineKey, "other-module:check"} {
			out[k] = strings.Join(admin.LRange(ctx, k, 0, -1).Val(), "\n")
		}
		out["jobs"] = fmt.Sprint(admin.HGetAll(ctx, protocol.JobsKey(mod)).Val())
		out["failed"] = fmt.Sprint(admin.HGetAll(ctx, protocol.FailedKey(mod)).Val())
		return out
	}
	if err := admin.RPush(ctx, protocol.DoneKey, `{"module":"nobody","document":{}}`).Err(); err != nil {
		t.Fatal(err) // someone else's result waiting in modules:done (dropped by the daemon later)
	}
	if err := admin.RPush(ctx, "other-module:check", `{"id":"0000000000000001"}`).Err(); err != nil {
		t.Fatal(err)
	}
	before := core()
	rogue := srv.ClientAs(mod, modulePW)
	probes := []struct {
		what string
		do   func() error
	}{
		{"SET the daemon lock", func() error { return rogue.Set(ctx, protocol.LockKey, "rogue", 0).Err() }},
		{"DEL the epoch", func() error { return rogue.Del(ctx, protocol.EpochKey).Err() }},
		{"HSET the daemon's jobs hash", func() error { return rogue.HSet(ctx, protocol.JobsKey(mod), "x", "y").Err() }},
		{"HDEL its own failed hash", func() error { return rogue.HDel(ctx, protocol.FailedKey(mod), "x").Err() }},
		{"LPUSH another module's queue", func() error { return rogue.LPush(ctx, "other-module:check", "x").Err() }},
		{"LPOP another module's queue", func() error { return rogue.LPop(ctx, "other-module:check").Err() }},
		{"LRANGE modules:done", func() error { return rogue.LRange(ctx, protocol.DoneKey, 0, -1).Err() }},
		{"LREM modules:done", func() error { return rogue.LRem(ctx, protocol.DoneKey, 0, "x").Err() }},
		{"DEL modules:done", func() error { return rogue.Del(ctx, protocol.DoneKey).Err() }},
		{"LMOVE from modules:done", func() error {
			return rogue.LMove(ctx, protocol.DoneKey, protocol.RunKey(mod), "LEFT", "RIGHT").Err()
		}},
		{"RPUSH modules:quarantine", func() error { return rogue.RPush(ctx, protocol.QuarantineKey, "x").Err() }},
		{"a script deleting the lock", func() error {
			return rogue.Eval(ctx, "return redis.call('DEL', KEYS[1])", []string{protocol.LockKey}).Err()
		}},
		{"a script naming modules:done that empties it", func() error {
			return rogue.Eval(ctx, "return redis.call('LTRIM', KEYS[1], 1, 0)", []string{protocol.DoneKey}).Err()
		}},
		{"a script removing from modules:done", func() error {
			return rogue.Eval(ctx, "return redis.call('LREM', KEYS[1], 0, ARGV[1])", []string{protocol.DoneKey}, "x").Err()
		}},
		{"a script writing an undeclared core key", func() error {
			return rogue.Eval(ctx, "return redis.call('SET', 'homeindex:epoch', 'rogue')", nil).Err()
		}},
		{"FLUSHALL", func() error { return rogue.FlushAll(ctx).Err() }},
		{"KEYS", func() error { return rogue.Keys(ctx, "*").Err() }},
		{"CONFIG SET", func() error { return rogue.ConfigSet(ctx, "appendonly", "no").Err() }},
		{"ACL SETUSER (grant itself more)", func() error { return rogue.Do(ctx, "ACL", "SETUSER", mod, "~*").Err() }},
	}
	for _, p := range probes {
		if err := p.do(); !qsDenied(err) {
			t.Errorf("module user: %s: got %v, want NOPERM", p.what, err)
		}
	}
	// What the module may do still works (its own queue, pushing a result).
	if err := rogue.LLen(ctx, protocol.CheckKey(mod)).Err(); err != nil {
		t.Errorf("module user: LLEN of its own queue: %v", err)
	}
	daemonUser := srv.ClientAs("homeindexd", daemonPW)
	for _, p := range []struct {
		what string
		do   func() error
	}{
		{"FLUSHALL", func() error { return daemonUser.FlushAll(ctx).Err() }},
		{"KEYS", func() error { return daemonUser.Keys(ctx, "*").Err() }},
		{"CONFIG GET", func() error { return daemonUser.ConfigGet(ctx, "save").Err() }},
		{"ACL SETUSER (grant itself more)", func() error { return daemonUser.Do(ctx, "ACL", "SETUSER", "homeindexd", "+@all").Err() }},
		{"GET a share key", func() error { return daemonUser.LLen(ctx, protocol.ShareKey("gpu")).Err() }},
	} {
		if err := p.do(); !qsDenied(err) {
			t.Errorf("daemon user: %s: got %v, want NOPERM", p.what, err)
		}
	}
	after := core()
	for k, v := range before {
		if k == protocol.DoneKey || k == protocol.DoneProcessingKey {
			// The daemon's merger polls modules:done and takes the foreign result whenever it
			// likes; the rogue's attempts on these lists are each checked for NOPERM above.
			continue
		}
		if after[k] != v {
			t.Errorf("%s changed by the rogue module: %q → %q", k, v, after[k])
		}
	}
	if got := len(aclLog()); got == 0 {
		t.Error("ACL LOG recorded none of the denials")
	}

	// An oversized result (the merger quarantines it, under this ACL too) and a new file: the
	// daemon is unaffected and its user needs nothing more.
	aclBefore := len(aclLog())
	if err := admin.RPush(ctx, protocol.DoneKey, qsResult(mod, `{"id":"0123456789abcdef"}`, `"blob":"`+strings.Repeat("a", qsMaxPayload)+`"`, "")).Err(); err != nil {
		t.Fatal(err)
	}
	more := s.write("after-probes.txt", "s2 after the probes")
	waitUntil(t, 60*time.Second, "a new file enriched after the probes", s.docsDone([]string{more}, noted))
	waitUntil(t, 30*time.Second, "the foreign and the oversized results handled", qsDoneEmpty(admin))
	if recs := qsQuarantine(t, admin); len(recs) != 1 || !strings.Contains(recs[0].Reason, "payload too large") {
		t.Errorf("quarantine after an oversized result: %d records, want one for its size", len(recs))
	}
	if log := aclLog(); len(log) != aclBefore {
		t.Errorf("ACL LOG grew from %d to %d entries while the daemon worked: %v", aclBefore, len(log), log[:len(log)-aclBefore])
	}
	if !s.Daemon.Running() {
		t.Fatal("homeindexd exited")
	}
	if strings.Contains(s.Daemon.Log(), "NOPERM") {
		t.Error("the daemon's log has a NOPERM: its ACL lacks something it uses")
	}
	qsNoSecretInLogs(t, s, daemonPW, modulePW, srv.AdminPassword())
}

// qsDenied reports whether err is Redis refusing a command or key to the user, at the top
// level (NOPERM) or inside a script.
func qsDenied(err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return false
	}
	msg := rerr.Error()
	return strings.HasPrefix(msg, "NOPERM") || strings.Contains(msg, "can't access") || strings.Contains(msg, "can't run")
}

// The README's Security section documents exactly the ACL lines and the Meilisearch key
// actions this suite runs with.
func TestFaultS2ReadmeACLLines(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"user " + daemonACLRules("homeindexd", "DAEMON_PASSWORD"),
		"user " + moduleACLRules("example-module", "MODULE_PASSWORD", "example-module"),
	} {
		if !strings.Contains(string(b), line) {
			t.Errorf("README.md lacks the ACL line\n%s", line)
		}
	}
	for _, a := range qsMeiliKeyActions {
		if !strings.Contains(string(b), `"`+a+`"`) {
			t.Errorf("README.md's Meilisearch key lacks the action %q", a)
		}
	}
}
