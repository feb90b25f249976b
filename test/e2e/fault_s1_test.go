package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
)

// qsSecret is a random password.
func qsSecret(t testing.TB) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "pw" + hex.EncodeToString(b)
}

// qsNoSecretInLogs fails if any log file of the stack (every process's output) contains one
// of the secrets.
func qsNoSecretInLogs(t *testing.T, s *stack, secrets ...string) {
	t.Helper()
	es, err := os.ReadDir(s.Logs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(s.Logs, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range secrets {
			if n := strings.Count(string(b), sec); n > 0 {
				t.Errorf("log %s contains a secret %d time(s)", e.Name(), n)
			}
		}
	}
}

// S1: Redis with ACL users (least privilege, README) over TLS only (rediss://, a CA made for
// the test): daemon and SDK module run the full flow; neither password appears in any log.
// With a wrong password the daemon and the module exit non-zero within 10 s, saying why.
func TestFaultS1RedisACLOverTLS(t *testing.T) {
	t.Parallel()
	const mod = "example-module"
	daemonPW, modulePW, wrongPW := qsSecret(t), qsSecret(t), qsSecret(t)
	srv := redistest.Start(t, redistest.WithAppendOnly(), redistest.WithTLS(),
		redistest.WithACL(daemonACLRules("homeindexd", daemonPW), moduleACLRules(mod, modulePW, mod)))
	daemonHost, moduleHost := srv.URL("homeindexd", daemonPW), srv.URL(mod, modulePW)
	if !strings.HasPrefix(daemonHost, "rediss://homeindexd:") {
		t.Fatalf("REDIS_HOST %q", daemonHost)
	}
	s := newStack(t, []module{{Name: mod, UID: "e1"}}, withRedis(srv, daemonHost), withDaemonEnv("DISPATCH_WINDOW", "32"))
	n := qsSize(24, 1000)
	var ids []string
	for i := range n {
		rel := fmt.Sprintf("dir%02d/file%04d.txt", i%10, i)
		if i%4 == 0 {
			rel = fmt.Sprintf("archive/usb/file%04d.txt", i)
		}
		ids = append(ids, s.write(rel, fmt.Sprintf("s1 file %d", i)))
	}
	started := time.Now()
	s.Daemon.Start()
	s.startModule("worker1", bin.example, mod, qsModuleEnv(srv, moduleHost)...)
	s.startModule("worker2", bin.example, mod, qsModuleEnv(srv, moduleHost)...)
	waitUntil(t, time.Duration(60+n/4)*time.Second, "every file enriched over TLS with ACL users", s.docsDone(ids, noted))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))
	t.Logf("S1: %d files through daemon and 2 SDK workers over rediss:// with ACL users in %v", n, time.Since(started).Round(time.Millisecond))
	waitUntil(t, 30*time.Second, "every file searchable", func() error {
		hits, err := s.searchCLI("", "")
		if err != nil || len(hits) != min(n, 1000) {
			return fmt.Errorf("search: %d hits (%v), want %d", len(hits), err, min(n, 1000))
		}
		return nil
	})
	ctx := context.Background()
	if log, err := srv.Client().Do(ctx, "ACL", "LOG").Slice(); err != nil || len(log) != 0 {
		t.Fatalf("ACL LOG has %d entries (%v), want none (a NOPERM somewhere): %v", len(log), err, log)
	}
	if !strings.Contains(s.Daemon.Log(), `rediss://homeindexd:xxxxx@`) {
		t.Error("the daemon's log does not show the redacted rediss:// endpoint")
	}

	// Wrong password: the daemon stops at once with a clear message, exit code 1.
	s.Daemon.Stop()
	env := maps.Clone(s.Daemon.Env)
	env["REDIS_HOST"] = srv.URL("homeindexd", wrongPW)
	bad := newProc(t, s.Logs, "homeindexd-wrong-password", bin.homeindexd, []string{"run"}, env)
	t0 := time.Now()
	bad.Start()
	if code := bad.WaitExit(10 * time.Second); code == 0 {
		t.Fatalf("homeindexd with a wrong password: exit code 0, want non-zero")
	}
	t.Logf("S1: homeindexd with a wrong password exited in %v", time.Since(t0).Round(time.Millisecond))
	for _, want := range []string{"redis refused the connection", "check the user and password in REDIS_HOST", "WRONGPASS"} {
		if !strings.Contains(bad.Log(), want) {
			t.Errorf("homeindexd with a wrong password: log lacks %q", want)
		}
	}

	// The same for a module.
	badMod := s.newModule("worker-wrong-password", bin.example, mod, qsModuleEnv(srv, srv.URL(mod, wrongPW))...)
	t0 = time.Now()
	badMod.Start()
	if code := badMod.WaitExit(10 * time.Second); code == 0 {
		t.Fatalf("module with a wrong password: exit code 0, want non-zero")
	}
	t.Logf("S1: a module with a wrong password exited in %v", time.Since(t0).Round(time.Millisecond))
	for _, want := range []string{"redis refused the connection", "WRONGPASS"} {
		if !strings.Contains(badMod.Log(), want) {
			t.Errorf("module with a wrong password: log lacks %q", want)
		}
	}
	qsNoSecretInLogs(t, s, daemonPW, modulePW, wrongPW, srv.AdminPassword())
}
