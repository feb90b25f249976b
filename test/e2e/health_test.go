package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// homeindexd serves /healthz (alive) and /readyz (catalog and Redis reachable) on HTTP_ADDR,
// and `homeindexd healthcheck` (the compose and Dockerfile healthcheck) probes /readyz, or
// /healthz with --live, with the daemon's own configuration: exit 0 or 1. Redis going away
// makes the daemon unready, not dead; it is ready again when Redis returns.
func TestHealthEndpointsAndHealthcheck(t *testing.T) {
	t.Parallel()
	s := newStack(t, []module{{Name: "example-module", UID: "e1"}})
	healthcheck := func(args ...string) int {
		stdout, stderr, code := s.cli(append([]string{"healthcheck"}, args...)...)
		t.Logf("healthcheck %v: exit %d: %s%s", args, code, stdout, stderr)
		return code
	}
	if code := healthcheck(); code != 1 {
		t.Fatalf("healthcheck with no daemon: exit %d, want 1", code)
	}
	s.Daemon.Start()
	waitUntil(t, 30*time.Second, "ready", func() error { return expectStatus(s.HTTPAddr, "/readyz", 200, "catalog", "redis") })
	if err := expectStatus(s.HTTPAddr, "/healthz", 200, "status"); err != nil {
		t.Fatal(err)
	}
	if code := healthcheck(); code != 0 {
		t.Fatalf("healthcheck of a ready daemon: exit %d, want 0", code)
	}

	s.Redis.Kill()
	waitUntil(t, 30*time.Second, "unready without Redis", func() error { return expectStatus(s.HTTPAddr, "/readyz", 503, "redis") })
	if err := expectStatus(s.HTTPAddr, "/healthz", 200, "status"); err != nil {
		t.Fatalf("alive without Redis: %v", err)
	}
	if code := healthcheck(); code != 1 {
		t.Fatalf("healthcheck without Redis: exit %d, want 1", code)
	}
	if code := healthcheck("--live"); code != 0 {
		t.Fatalf("healthcheck --live without Redis: exit %d, want 0", code)
	}

	s.Redis.Restart()
	// The Redis client fails dials fast for up to a second after an outage (go-redis's dial
	// circuit breaker), so readiness may take a moment to settle.
	waitUntil(t, 30*time.Second, "ready again with Redis back", func() error {
		if err := expectStatus(s.HTTPAddr, "/readyz", 200, "catalog", "redis"); err != nil {
			return err
		}
		if code := healthcheck(); code != 0 {
			return fmt.Errorf("healthcheck: exit %d", code)
		}
		return nil
	})
	if !s.Daemon.Running() {
		t.Fatal("homeindexd exited")
	}
	s.Daemon.Stop()
	if code := healthcheck("--live"); code != 1 {
		t.Fatalf("healthcheck --live of a stopped daemon: exit %d, want 1", code)
	}
}

// expectStatus GETs path and checks the status code and that the JSON body has the keys.
func expectStatus(addr, path string, code int, keys ...string) error {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != code {
		return fmt.Errorf("GET %s: %d %s, want %d", path, resp.StatusCode, b, code)
	}
	var body map[string]string
	if err := json.Unmarshal(b, &body); err != nil {
		return fmt.Errorf("GET %s: body %q: %w", path, b, err)
	}
	for _, k := range keys {
		if _, ok := body[k]; !ok {
			return fmt.Errorf("GET %s: body %s has no %q", path, b, k)
		}
	}
	if code == 200 {
		for k, v := range body {
			if v != "ok" {
				return fmt.Errorf("GET %s: %s is %q", path, k, v)
			}
		}
	}
	return nil
}
