package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/ops"
	"github.com/homeindex/homeindex/protocol"
)

// pageState is what the status page shows, read from its DOM by pageStateJS.
type pageState struct {
	Loaded   bool   `json:"loaded"`
	Pipeline string `json:"pipeline"`
	Message  string `json:"message"`
	Modules  []struct {
		Name, State, Done, Parked, Waiting, ETA string
		Paused                                  bool
	} `json:"modules"`
	Drives []struct {
		Name, Present, Marker, Done, Pending, Failed string
	} `json:"drives"`
	Failures []struct {
		ID, Module, Path, Reason string
		Retry                    bool
	} `json:"failures"`
	FailuresEmpty bool `json:"failuresEmpty"`
	// Markup is the number of elements inside the failures and search tables that the page
	// did not make itself: a filename like "<b>…</b>" must stay text.
	Markup int `json:"markup"`
	Hits   []struct {
		ID, Path, Type, Size string
	} `json:"hits"`
	SearchSummary string `json:"searchSummary"`
}

const pageStateJS = `(() => {
	const all = (s, root) => [...(root || document).querySelectorAll(s)];
	const field = (row, f) => { const e = row.querySelector('[data-field="' + f + '"]'); return e ? e.textContent.trim() : ""; };
	const visible = (id) => { const e = document.getElementById(id); return !!e && !e.hidden; };
	return {
		loaded: document.body.getAttribute("data-loaded") === "true",
		pipeline: document.getElementById("pipeline").textContent,
		message: visible("message") ? document.getElementById("message").textContent : "",
		modules: all('[data-testid="module-row"]').map((r) => ({
			Name: r.dataset.module, State: r.dataset.state, Done: field(r, "done"), Parked: field(r, "parked"),
			Waiting: field(r, "waiting"), ETA: field(r, "eta"), Paused: !!r.querySelector('[data-testid="resume"]')})),
		drives: all('[data-testid="drive-row"]').map((r) => ({
			Name: r.dataset.drive, Present: field(r, "present"), Marker: field(r, "marker"), Done: field(r, "done"),
			Pending: field(r, "pending"), Failed: field(r, "failed")})),
		failures: all('[data-testid="failure-row"]').map((r) => ({
			ID: r.dataset.id, Module: r.dataset.module, Path: field(r, "path"), Reason: field(r, "reason"),
			Retry: !!r.querySelector('button[data-testid="retry"]')})),
		failuresEmpty: visible("failures-empty"),
		markup: all('#failures [data-field="path"] *, #search-results [data-field="path"] b').length,
		hits: all('[data-testid="search-hit"]').map((r) => ({
			ID: r.dataset.id, Path: r.querySelector('[data-field="path"]').firstChild.textContent,
			Type: field(r, "type"), Size: field(r, "size")})),
		searchSummary: document.getElementById("search-summary").textContent,
	};
})()`

func (p *page) State() (pageState, error) {
	var st pageState
	err := p.Eval(pageStateJS, &st)
	return st, err
}

// waitPage polls the page's state until check accepts it.
func (p *page) waitPage(d time.Duration, what string, check func(pageState) error) pageState {
	p.t.Helper()
	var st pageState
	waitUntil(p.t, d, what, func() error {
		var err error
		if st, err = p.State(); err != nil {
			return err
		}
		return check(st)
	})
	return st
}

// screenshotDir is where the test leaves its screenshots: $PAGE_SCREENSHOT_DIR, made if
// needed, else the test's temporary directory.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PAGE_SCREENSHOT_DIR")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The status page in headless Chromium against a real daemon, Redis and module: it shows the
// module, the drive with its marker and the parked failure (its odd filename as text), finds
// a file by name, and its Retry button runs the parked job again, which completes; the page
// shows that on its own next refresh. Screenshots in light and dark go to
// $PAGE_SCREENSHOT_DIR (docs/status-page.png is one).
func TestPageStatus(t *testing.T) {
	t.Parallel()
	const mod = "timeout-module"
	// A filename the page must show as text, never as markup.
	const poisonPath = `inbox/<b>scan</b> & "draft" 'v2'.pdf`
	s := newStack(t, []module{{Name: mod, UID: "t1"}}, withDaemonEnv("MAX_ATTEMPTS", "1"))
	br := startBrowser(t) // Chromium starts while the stack works
	notes := s.write("docs/holiday notes.txt", "notes for the page test")
	drive := s.plug("usb1", map[string]string{"photos/beach.jpg": "beach", "photos/hill.jpg": "hill"})
	ids := []string{notes}
	for _, id := range drive {
		ids = append(ids, id)
	}
	s.Daemon.Start()
	worker := s.startModule("timeout", bin.timeout, mod, "TIMEOUT", "10")
	waitUntil(t, 60*time.Second, "3 files through the module", s.docsDone(ids, nil))
	waitUntil(t, 30*time.Second, "usb1 ready", s.markerIs("usb1", "ready"))

	// The module now times out on a new file: parked after its one attempt.
	worker.Stop()
	worker.Env["TIMEOUT"], worker.Env["SLEEP"] = "0.3", "30"
	worker.Start()
	poison := s.write(poisonPath, "poison for the page test")
	waitUntil(t, 60*time.Second, "the new file parked", func() error {
		st, err := s.status()
		if err != nil {
			return err
		}
		if m := moduleOf(st, mod); m.Parked != 1 || m.Done != 3 {
			return fmt.Errorf("module %+v", m)
		}
		return nil
	})

	p := br.NewPage(1280, 800)
	p.Navigate("http://" + s.HTTPAddr + "/status")
	st := p.waitPage(30*time.Second, "the module, the drive and the failure on the page", func(st pageState) error {
		if !st.Loaded || len(st.Modules) != 1 || len(st.Drives) != 1 || len(st.Failures) != 1 {
			return fmt.Errorf("page %+v", st)
		}
		if m := st.Modules[0]; m.Name != mod || m.Done != "3" || m.Parked != "1" {
			return fmt.Errorf("module row %+v", m)
		}
		return nil
	})
	if st.Pipeline != "running" {
		t.Errorf("pipeline shows %q, want running", st.Pipeline)
	}
	if d := st.Drives[0]; d.Name != "usb1" || d.Present != "connected" || d.Marker != "ready" || d.Done != "2" || d.Pending != "0" {
		t.Errorf("drive row %+v, want usb1 connected, marker ready, 2 done", d)
	}
	f := st.Failures[0]
	if f.Path != poisonPath || f.ID != poison || f.Module != mod || !strings.Contains(f.Reason, "timed out") || !f.Retry {
		t.Errorf("failure row %+v, want %q (%s) in %s, timed out, with a Retry button", f, poisonPath, poison, mod)
	}
	if st.Markup != 0 || st.FailuresEmpty {
		t.Errorf("failures table: %d elements made from a filename, empty notice shown %v", st.Markup, st.FailuresEmpty)
	}

	// Search by a word of a filename.
	p.Type("#search-input", "holiday")
	st = p.waitPage(15*time.Second, "a search hit", func(st pageState) error {
		if len(st.Hits) != 1 {
			return fmt.Errorf("hits %+v, summary %q", st.Hits, st.SearchSummary)
		}
		return nil
	})
	if h := st.Hits[0]; h.ID != notes || h.Path != "docs/holiday notes.txt" || h.Size != "23 B" || h.Type == "" {
		t.Errorf("search hit %+v, want docs/holiday notes.txt, 23 B, a type", h)
	}

	dir := screenshotDir(t)
	shot := filepath.Join(dir, "status-page.png")
	p.Screenshot(shot)
	p.SetColorScheme("dark")
	p.Screenshot(filepath.Join(dir, "status-page-dark.png"))
	p.SetColorScheme("light")
	p.Resize(400, 900) // a phone
	p.Screenshot(filepath.Join(dir, "status-page-narrow.png"))
	p.Resize(1280, 800)

	// The module is fixed; the Retry button runs the parked job again and it completes.
	worker.Stop()
	worker.Env["TIMEOUT"], worker.Env["SLEEP"] = "10", "0"
	worker.Start()
	p.Click(`[data-testid="failure-row"][data-id="` + poison + `"] button[data-testid="retry"]`)
	waitUntil(t, 60*time.Second, "the retried file merged, its failure cleared", s.docsDone([]string{poison}, func(d protocol.Document) error {
		if len(d.Failures) > 0 && string(d.Failures) != "{}" {
			return fmt.Errorf("failures %s", d.Failures)
		}
		return nil
	}))
	var failed ops.FailedList
	getJSON(t, s.HTTPAddr, "/api/failed", &failed)
	if len(failed.Parked) != 0 {
		t.Errorf("/api/failed after the retry: %+v, want nothing parked", failed.Parked)
	}
	p.waitPage(30*time.Second, "the page shows the retry and no failure", func(st pageState) error {
		if !strings.Contains(st.Message, "Retried 1 job") {
			return fmt.Errorf("message %q", st.Message)
		}
		if len(st.Failures) != 0 || !st.FailuresEmpty || len(st.Modules) != 1 || st.Modules[0].Done != "4" || st.Modules[0].Parked != "0" || st.Modules[0].State != "idle" {
			return fmt.Errorf("page %+v", st)
		}
		return nil
	})
	p.Screenshot(filepath.Join(dir, "status-page-after-retry.png"))
	t.Logf("screenshots in %s", dir)

	if probs := br.Problems(); len(probs) > 0 {
		t.Errorf("the page reported problems (console errors, exceptions, CSP violations):\n%s", strings.Join(probs, "\n"))
	}
}
