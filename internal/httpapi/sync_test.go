package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// POST /api/sync is guarded like the other POSTs, and answers 503 where no scheduler runs.
// (The e2e suite drives it against the real daemon: watch_sync_test.go.)
func TestSyncEndpointGuardedAndUnavailableWithoutScheduler(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, nil)
	if code, _ := d.do(t, http.MethodPost, "/api/sync", `{}`, "Content-Type", "text/plain"); code != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain POST = %d, want 415", code)
	}
	if code, _ := d.do(t, http.MethodPost, "/api/sync", `{}`, "Content-Type", "application/json", "Origin", "http://evil.example"); code != http.StatusForbidden {
		t.Errorf("foreign origin POST = %d, want 403", code)
	}
	if code, body := d.do(t, http.MethodPost, "/api/sync", `{"wait":"yes"}`, "Content-Type", "application/json"); code != http.StatusBadRequest {
		t.Errorf("bad body = %d %s, want 400", code, body)
	}
	code, body := d.do(t, http.MethodPost, "/api/sync", `{"wait":false}`, "Content-Type", "application/json")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "no scheduler") {
		t.Errorf("POST /api/sync without a scheduler = %d %s, want 503", code, body)
	}
	code, page := d.do(t, http.MethodGet, "/status", "")
	if code != http.StatusOK || !strings.Contains(page, `data-testid="sync-now"`) {
		t.Errorf("the status page has no Sync now button (%d)", code)
	}
}
