package queue

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
	"github.com/rs/zerolog"
)

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestConnectWarnings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		opts     []redistest.Option
		warnings []string // substrings of expected warnings
	}{
		{"no persistence", nil, []string{"persistence is off"}},
		{"eviction", []redistest.Option{redistest.WithAppendOnly(), redistest.WithArgs("--maxmemory-policy", "allkeys-lru")},
			[]string{"maxmemory-policy is not noeviction"}},
		{"rdb save points", []redistest.Option{redistest.WithArgs("--save", "3600 1")}, nil},
		{"aof and noeviction", []redistest.Option{redistest.WithAppendOnly()}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t, tc.opts...)
			var logs logBuffer
			c, err := Connect(context.Background(), Options{Endpoint: redisconn.Endpoint{Addr: srv.Addr()}}, zerolog.New(&logs))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			out := logs.String()
			warns := strings.Count(out, `"level":"warn"`)
			if warns != len(tc.warnings) {
				t.Errorf("%d warnings, want %d:\n%s", warns, len(tc.warnings), out)
			}
			for _, w := range tc.warnings {
				if !strings.Contains(out, w) {
					t.Errorf("no warning %q in:\n%s", w, out)
				}
			}
		})
	}
}

func TestConnectKeepsPasswordSecret(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-Passw0rd"
	srv := redistest.Start(t)
	var logs logBuffer
	log := zerolog.New(&logs)
	ctx := context.Background()
	// A server without AUTH refuses the password; one that is down refuses the connection.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l.Addr().String()
	l.Close()
	for _, addr := range []string{srv.Addr(), closed} {
		_, err := Connect(ctx, Options{Endpoint: redisconn.Endpoint{Addr: addr, Username: "bob", Password: secret}, DialTimeout: time.Second}, log)
		if err == nil {
			t.Fatalf("%s: connect with a wrong password: got no error", addr)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error shows the password: %v", err)
		}
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("logs show the password:\n%s", logs.String())
	}
	o := Options{Endpoint: redisconn.Endpoint{Addr: "h:1", Username: "u", Password: secret, DB: 2, TLS: true}}
	if s := o.String(); strings.Contains(s, secret) || s != "rediss://u:xxxxx@h:1/2" {
		t.Errorf("Options.String() = %q", s)
	}
}

// The pool options queue hands to redisconn (login, TLS and shared settings are tested there).
func TestRedisOptions(t *testing.T) {
	t.Parallel()
	ro, err := Options{Endpoint: redisconn.Endpoint{Addr: "h:1"}}.redisOptions()
	if err != nil || ro.PoolSize != DefaultPoolSize || ro.DialTimeout != DefaultDialTimeout || !ro.ContextTimeoutEnabled || ro.DialerRetries != 2 {
		t.Fatalf("redisOptions: %+v, %v", ro, err)
	}
}

func TestVersionAtLeast(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		have string
		want bool
	}{{"6.2.0", true}, {"6.2", true}, {"7.0.15", true}, {"10.0.0", true}, {"6.0.16", false}, {"5.0.7", false},
		{"", false}, {"x.y", false}} {
		if got := versionAtLeast(tc.have, MinRedisVersion); got != tc.want {
			t.Errorf("versionAtLeast(%q) = %v, want %v", tc.have, got, tc.want)
		}
	}
}

// TestConnectionLoss: while Redis is down every operation returns an error (no panic, no
// hang), the loss is logged once; after a restart everything works again, including scripts
// whose cache the restart emptied.
func TestConnectionLoss(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithAppendOnly())
	var logs logBuffer
	ctx := context.Background()
	c, err := Connect(ctx, Options{Endpoint: redisconn.Endpoint{Addr: srv.Addr()}, DialTimeout: 200 * time.Millisecond}, zerolog.New(&logs))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mods := ReapOptions{Modules: []Module{{"m", ""}}}
	if _, err := c.Push(ctx, "m", items("", "a"), false); err != nil {
		t.Fatal(err)
	}

	srv.Kill()
	opCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	ops := map[string]func() error{
		"push":     func() error { _, err := c.Push(opCtx, "m", items("", "b"), false); return err },
		"reap":     func() error { _, err := c.Reap(opCtx, mods); return err },
		"sweep":    func() error { _, err := c.SweepOrphans(opCtx, Module{"m", ""}, time.Second, RetryPolicy{}); return err },
		"counts":   func() error { _, err := c.Counts(opCtx, "m"); return err },
		"nextdone": func() error { _, err := c.NextDone(opCtx, time.Second); return err },
		"lock":     func() error { _, err := c.AcquireLock(opCtx, "A", time.Second); return err },
		"epoch":    func() error { _, _, err := c.Epoch(opCtx); return err },
		"withdraw": func() error { _, err := c.Withdraw(opCtx, "m", []string{"zz"}); return err },
	}
	for name, op := range ops {
		if err := op(); err == nil || errors.Is(err, ErrNoDone) {
			t.Errorf("%s with redis down: got %v, want a connection error", name, err)
		}
	}
	if c.Healthy() {
		t.Error("Healthy() is true with redis down")
	}
	if n := strings.Count(logs.String(), "redis unreachable"); n != 1 {
		t.Errorf("%d 'unreachable' log lines, want 1:\n%s", n, logs.String())
	}

	srv.Restart() // AOF: data back, script cache empty
	// go-redis fails fast for up to a second after a dial storm, then probes again.
	waitFor(t, "redis back", func() bool { return c.Ping(ctx) == nil })
	if n, err := c.Counts(ctx, "m"); err != nil || n.Jobs != 1 {
		t.Errorf("after restart: %+v, %v; want job a (AOF)", n, err)
	}
	for name, op := range ops {
		if err := op(); err != nil && !errors.Is(err, ErrNoDone) {
			t.Errorf("%s after restart: %v", name, err)
		}
	}
	if !c.Healthy() || !strings.Contains(logs.String(), "redis reachable again") {
		t.Errorf("recovery not noticed:\n%s", logs.String())
	}
	if n, err := c.Counts(ctx, "m"); err != nil || n.Jobs != 2 {
		t.Errorf("after restart: %+v, %v; want jobs a and b", n, err)
	}
	if got, _ := srv.Client().LLen(ctx, protocol.CheckKey("m")).Result(); got != 2 {
		t.Errorf(":check has %d items, want 2", got)
	}
}
