package httpapi

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
)

const threeModules = `
- {name: ocr, uid: o1}
- {name: caption, uid: c1}
- {name: transcript, uid: t1}
`

// series parses a text exposition into series name{labels} → value.
func series(t *testing.T, body string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// At 100,000 documents on 8 drives with three modules, /metrics exports fewer than 1,000
// series, no label carries a path or a document id, and the counts match the catalog.
func TestMetricsSeriesAt100kDocuments(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	d := startDaemon(t, map[string]string{"MODULES": threeModules, "REDIS_HOST": rs.Addr()})
	const n, onDrives, drives = 100_000, 2_000, 8
	start := time.Now()
	fill100k(t, d.app.Config.StateDirectory)
	t.Logf("inserted %d documents in %v", n, time.Since(start))

	start = time.Now()
	code, body := d.do(t, http.MethodGet, "/metrics", "")
	t.Logf("scrape at %d documents took %v", n, time.Since(start))
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	got := series(t, body)
	t.Logf("%d series", len(got))
	if len(got) >= 1000 {
		t.Fatalf("%d series at %d documents, want fewer than 1000", len(got), n)
	}
	for s := range got {
		if !strings.HasPrefix(s, "homeindex_") {
			continue
		}
		if strings.Contains(s, "/") || strings.Contains(s, "file-") || strings.Contains(s, "0000000000") {
			t.Errorf("series %s carries a path or a document id", s)
		}
	}
	for name, want := range map[string]float64{
		`homeindex_documents{state="live"}`:                          n,
		`homeindex_files`:                                            n,
		`homeindex_queue_jobs{module="ocr",state="waiting_offline"}`: n / 20, // no dispatch order computed: nothing dispatchable
		`homeindex_module_done_documents{module="ocr"}`:              n - n/20,
		`homeindex_module_done_documents{module="transcript"}`:       n - n/20,
		`homeindex_drive_files{drive="drive3",state="pending"}`:      12, // 760, 780, ..., 980
		`homeindex_drive_files{drive="drive4",state="pending"}`:      13, // 1000, ..., 1240
		`homeindex_drive_files{drive="drive3",state="done"}`:         onDrives/drives - 12,
		`homeindex_drive_files{drive="drive4",state="done"}`:         onDrives/drives - 13,
		`homeindex_drive_present{drive="drive2"}`:                    1,
		`homeindex_drive_present{drive="drive3"}`:                    0,
		`homeindex_drives{state="present"}`:                          drives / 2,
		`homeindex_redis_up`:                                         1,
		`homeindex_module_paused{module="caption"}`:                  0,
		`homeindex_queue_jobs{module="caption",state="parked"}`:      0,
		`homeindex_results_total{outcome="merged"}`:                  0,
		`homeindex_build_info{version="test"}`:                       1,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
	start = time.Now()
	if code, _ := d.do(t, http.MethodGet, "/api/status", ""); code != http.StatusOK {
		t.Fatalf("GET /api/status: %d", code)
	}
	t.Logf("status at %d documents took %v", n, time.Since(start))
}

// fill100k writes 100,000 documents into the catalog with internal/testutil/catalogfill, built
// without the race detector (a sync of 100k files takes minutes under it, and even plain SQL
// inserts take 40 s): every 20th waits for ocr, the rest are done; the first 2,000 have their
// path on one of 8 drives, 250 each (drive0, 2, 4, 6 present).
func fill100k(t *testing.T, stateDir string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "catalogfill")
	build := exec.Command("go", "build", "-o", bin, "github.com/homeindex/homeindex/internal/testutil/catalogfill")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build catalogfill: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "-db", filepath.Join(stateDir, "catalog.db"), "-n", "100000",
		"-pending-every", "20", "-module", "ocr", "-drive-files", "2000", "-drives", "8").CombinedOutput(); err != nil {
		t.Fatalf("catalogfill: %v\n%s", err, out)
	}
}
