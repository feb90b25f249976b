package meilitest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, s *Server, path, key string) (int, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func TestStartStopRestart(t *testing.T) {
	t.Parallel()
	s := Start(t)
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Fatalf("URL = %q, want a loopback address", s.URL)
	}
	if len(s.MasterKey) < 16 {
		t.Fatalf("master key has %d bytes, want at least 16", len(s.MasterKey))
	}
	if code, body, err := get(t, s, "/version", s.MasterKey); err != nil || code != 200 || !strings.Contains(body, `"pkgVersion":"1.21.0"`) {
		t.Fatalf("GET /version = %d %q %v, want 200 with version 1.21.0", code, body, err)
	}
	if code, _, err := get(t, s, "/indexes", ""); err != nil || code != 401 {
		t.Fatalf("GET /indexes without key = %d %v, want 401", code, err)
	}

	s.Stop()
	if _, _, err := get(t, s, "/health", ""); err == nil {
		t.Fatal("GET /health after Stop succeeded, want a connection error")
	}
	s.Stop() // a second Stop is harmless

	s.Restart()
	if code, _, err := get(t, s, "/health", ""); err != nil || code != 200 {
		t.Fatalf("GET /health after Restart = %d %v, want 200", code, err)
	}
}

func TestBinaryFromEnv(t *testing.T) {
	t.Setenv(EnvBinary, "/nonexistent/meilisearch")
	if _, err := Binary(); err == nil || !strings.Contains(err.Error(), EnvBinary) {
		t.Fatalf("Binary() error = %v, want one naming %s", err, EnvBinary)
	}
}
