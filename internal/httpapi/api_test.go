package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// The POST endpoints refuse what a browser page on another site can send: a body that is not
// application/json (a form or text/plain needs no CORS preflight), a foreign Origin, a
// cross-site Sec-Fetch-Site. The CLI's request (JSON, no Origin) and the status page's
// (same origin) pass the guard. GET endpoints do not accept POST, and POST endpoints do not
// accept GET.
func TestPostEndpointsRefuseCrossSiteRequests(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, nil)
	const body = `{"module":"m"}`
	for _, tc := range []struct {
		name   string
		header []string
		want   int
	}{
		{"form post", []string{"Content-Type", "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
		{"text/plain (simple CORS request)", []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType},
		{"no content type", nil, http.StatusUnsupportedMediaType},
		{"foreign origin", []string{"Content-Type", "application/json", "Origin", "http://evil.example"}, http.StatusForbidden},
		{"foreign origin, same host other port", []string{"Content-Type", "application/json", "Origin", "http://127.0.0.1:1"}, http.StatusForbidden},
		{"null origin", []string{"Content-Type", "application/json", "Origin", "null"}, http.StatusForbidden},
		{"cross-site fetch", []string{"Content-Type", "application/json", "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		// Past the guard: no module m is configured, so the action itself answers 404.
		{"cli", []string{"Content-Type", "application/json"}, http.StatusNotFound},
		{"same origin page", []string{"Content-Type", "application/json; charset=utf-8", "Origin", d.base, "Sec-Fetch-Site", "same-origin"}, http.StatusNotFound},
	} {
		for _, path := range []string{"/api/pause", "/api/resume", "/api/retry", "/api/requeue", "/api/failed/clear"} {
			code, resp := d.do(t, http.MethodPost, path, body, tc.header...)
			if code != tc.want {
				t.Errorf("%s: POST %s = %d %s, want %d", tc.name, path, code, resp, tc.want)
			}
		}
	}
	if code, _ := d.do(t, http.MethodGet, "/api/pause", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/pause = %d, want 405", code)
	}
	for _, path := range []string{"/api/status", "/api/failed", "/api/search", "/metrics"} {
		if code, _ := d.do(t, http.MethodPost, path, "{}", "Content-Type", "application/json"); code != http.StatusMethodNotAllowed {
			t.Errorf("POST %s = %d, want 405 (GET endpoints are read-only)", path, code)
		}
	}
	if code, resp := d.do(t, http.MethodPost, "/api/pause", `{"module":"m","extra":1}`, "Content-Type", "application/json"); code != http.StatusBadRequest || !strings.Contains(resp, "extra") {
		t.Errorf("unknown field: %d %s, want 400 naming it", code, resp)
	}
}

// pprof is served only when asked (HTTP_PPROF=true); "/" is the status page, other paths 404.
func TestPprofOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	off := startDaemon(t, nil)
	if code, _ := off.do(t, http.MethodGet, "/debug/pprof/", ""); code != http.StatusNotFound {
		t.Errorf("pprof without the flag: %d, want 404", code)
	}
	if code, _ := off.do(t, http.MethodGet, "/debug/", ""); code != http.StatusNotFound {
		t.Errorf("/debug/: %d, want 404 (not ours)", code)
	}
	on := startDaemon(t, nil, WithPprof())
	if code, body := on.do(t, http.MethodGet, "/debug/pprof/", ""); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("pprof with the flag: %d, want 200 with the profile index", code)
	}
}

// /api/search answers hits as JSON and a bad filter with 400 and the reason; /api/failed and
// /api/status check their parameters.
func TestSearchAndParameterErrors(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, nil)
	if code, body := d.do(t, http.MethodGet, "/api/search?q=x&limit=5", ""); code != http.StatusOK || !strings.Contains(body, `"hits":[]`) {
		t.Errorf("search: %d %s, want 200 with no hits", code, body)
	}
	if code, body := d.do(t, http.MethodGet, "/api/search?filter=size%20%3E", ""); code != http.StatusBadRequest || !strings.Contains(body, "filter") {
		t.Errorf("bad filter: %d %s, want 400 naming the filter", code, body)
	}
	if code, _ := d.do(t, http.MethodGet, "/api/search?limit=-1", ""); code != http.StatusBadRequest {
		t.Errorf("bad limit: %d, want 400", code)
	}
	if code, _ := d.do(t, http.MethodGet, "/api/failed?limit=x", ""); code != http.StatusBadRequest {
		t.Errorf("bad failed limit: %d, want 400", code)
	}
	if code, body := d.do(t, http.MethodGet, "/api/failed?module=nope", ""); code != http.StatusNotFound || !strings.Contains(body, "nope") {
		t.Errorf("unknown module: %d %s, want 404 naming it", code, body)
	}
	if code, body := d.do(t, http.MethodGet, "/api/status", ""); code != http.StatusOK || !strings.Contains(body, `"pipeline":{"state":"off"`) {
		t.Errorf("status without modules: %d %s", code, body)
	}
}

// A browser's own request for an icon gets an empty answer, not a 404 a page would log.
func TestFaviconAnswersNoContent(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, nil)
	if code, body := d.do(t, "GET", "/favicon.ico", ""); code != http.StatusNoContent || body != "" {
		t.Fatalf("favicon: %d %q, want 204 and no body", code, body)
	}
}
