package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/ops"
)

// POST /api/missing/confirm is guarded like the other POSTs; past the guard it records the
// confirmation, which status shows until a sync takes it.
func TestMissingConfirm(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, nil)
	for _, h := range [][]string{{"Content-Type", "text/plain"}, {"Content-Type", "application/json", "Origin", "http://evil.example"}} {
		if code, resp := d.do(t, http.MethodPost, "/api/missing/confirm", "{}", h...); code == http.StatusOK {
			t.Fatalf("guarded POST with %v answered 200: %s", h, resp)
		}
	}
	if _, ok, _ := d.app.Catalog.Meta(context.Background(), catalog.MetaMissingConfirm); ok {
		t.Fatal("a refused request confirmed")
	}
	if code, resp := d.do(t, http.MethodPost, "/api/missing/confirm", `{"x":1}`, "Content-Type", "application/json"); code != http.StatusBadRequest {
		t.Fatalf("unknown field: %d %s", code, resp)
	}
	code, resp := d.do(t, http.MethodPost, "/api/missing/confirm", "", "Content-Type", "application/json")
	if code != http.StatusOK {
		t.Fatalf("confirm: %d %s", code, resp)
	}
	var res ops.ConfirmResult
	if err := json.Unmarshal([]byte(resp), &res); err != nil || !res.Confirmed || res.Sync != "next" {
		t.Fatalf("confirm answer %q: %+v %v", resp, res, err)
	}
	code, resp = d.do(t, http.MethodGet, "/api/status", "")
	var st ops.Status
	if err := json.Unmarshal([]byte(resp), &st); code != http.StatusOK || err != nil || !st.Missing.ConfirmPending {
		t.Fatalf("status after confirm: %d %+v %v", code, st.Missing, err)
	}
	if _, m := d.do(t, http.MethodGet, "/metrics", ""); !strings.Contains(m, "homeindex_missing_hold 0") || !strings.Contains(m, "homeindex_missing_documents 0") {
		t.Fatalf("metrics lack the missing series:\n%s", m)
	}
}
