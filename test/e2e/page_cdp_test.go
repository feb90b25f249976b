package e2e

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A small Chrome DevTools Protocol client over --remote-debugging-pipe: Chromium reads
// NUL-terminated JSON commands on file descriptor 3 and writes replies and events, also
// NUL-terminated, on descriptor 4. No websocket, no driver, no Go dependency.

// chromiumBin is Debian's chromium, which `make deps` installs (scripts/install-chromium.sh).
const chromiumBin = "/usr/bin/chromium"

// cdpCallTimeout bounds one command's answer.
const cdpCallTimeout = 15 * time.Second

// cdpMessage is every message on the pipe: a command (ID, Method, Params), its answer (ID,
// Result or Error) or an event (Method, Params); SessionID names the page it concerns.
type cdpMessage struct {
	ID        int64           `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// browser is one headless Chromium process the test owns, killed (its whole process group)
// when the test ends. Console errors, uncaught exceptions and error-level log entries (a CSP
// violation, a failed load) of its pages are collected in problems.
type browser struct {
	t       *testing.T
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}

	wmu sync.Mutex // one writer on the pipe at a time
	w   *os.File

	mu       sync.Mutex
	nextID   int64
	pending  map[int64]chan cdpMessage
	readErr  error
	problems []string
}

// startBrowser launches headless Chromium with a fresh profile. The test fails (never skips)
// when Chromium is missing: CI installs it with `make deps`.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumBin); err != nil {
		t.Fatalf("headless Chromium is needed for the status page test and %s is missing (%v): run `make deps` (scripts/install-chromium.sh)", chromiumBin, err)
	}
	dir := t.TempDir() // removed after the cleanup below has stopped Chromium
	toChromeR, toChromeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromChromeR, fromChromeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "chromium.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chromiumBin,
		"--headless=new", "--no-sandbox", "--disable-gpu", // root in a container: no sandbox
		"--remote-debugging-pipe",
		"--user-data-dir="+filepath.Join(dir, "profile"),
		// Nothing but loopback: no background requests to hosts this machine cannot reach.
		"--no-first-run", "--no-default-browser-check", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-quic", "--disable-extensions",
		"--disable-default-apps", "--mute-audio", "--hide-scrollbars",
		"--window-size=1280,800", "--lang=en-US",
		"about:blank")
	cmd.ExtraFiles = []*os.File{toChromeR, fromChromeW} // fd 3, fd 4
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "LANG=en_US.UTF-8", "TZ=UTC")
	// Its own process group, so the cleanup can end Chromium's helpers (renderer, GPU, zygote)
	// with it; and it dies with the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", chromiumBin, err)
	}
	toChromeR.Close()
	fromChromeW.Close()
	logf.Close()
	b := &browser{t: t, cmd: cmd, logPath: logPath, exited: make(chan struct{}), w: toChromeW, pending: map[int64]chan cdpMessage{}}
	go func() {
		_ = cmd.Wait()
		close(b.exited)
	}()
	go b.read(fromChromeR)
	t.Cleanup(func() {
		b.close()
		if t.Failed() {
			if log, err := os.ReadFile(logPath); err == nil {
				t.Logf("chromium log:\n%s", tail(string(log), 4000))
			}
		}
	})
	return b
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// close asks Chromium to quit, then kills its process group if it has not within 10 s.
func (b *browser) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = b.call(ctx, "", "Browser.close", nil, nil)
	cancel()
	select {
	case <-b.exited:
	case <-time.After(10 * time.Second):
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL) // helpers left behind, if any
	<-b.exited
	b.w.Close()
}

// read dispatches answers to their callers and records the pages' problems, until the pipe
// closes.
func (b *browser) read(r io.ReadCloser) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.readErr = fmt.Errorf("chromium closed the devtools pipe: %w", err)
			for id, ch := range b.pending {
				close(ch)
				delete(b.pending, id)
			}
			b.mu.Unlock()
			return
		}
		var m cdpMessage
		if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
			b.problem(fmt.Sprintf("undecodable devtools message %q: %v", raw, err))
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.pending[m.ID]
			delete(b.pending, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		b.event(m)
	}
}

func (b *browser) problem(s string) {
	b.mu.Lock()
	b.problems = append(b.problems, s)
	b.mu.Unlock()
}

// Problems returns what went wrong in the pages so far.
func (b *browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

func (b *browser) event(m cdpMessage) {
	switch m.Method {
	case "Runtime.exceptionThrown":
		var p struct {
			ExceptionDetails struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		_ = json.Unmarshal(m.Params, &p)
		b.problem("uncaught exception: " + p.ExceptionDetails.Text + " " + p.ExceptionDetails.Exception.Description)
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string            `json:"type"`
			Args []json.RawMessage `json:"args"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Type == "error" || p.Type == "assert" {
			b.problem(fmt.Sprintf("console.%s: %s", p.Type, p.Args))
		}
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Level, Source, Text, URL string
			} `json:"entry"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Entry.Level == "error" {
			b.problem(fmt.Sprintf("%s error: %s %s", p.Entry.Source, p.Entry.Text, p.Entry.URL))
		}
	}
}

// call sends one command (to the browser, or to a page's session) and decodes its result into
// out (nil: ignored).
func (b *browser) call(ctx context.Context, session, method string, params, out any) error {
	b.mu.Lock()
	if b.readErr != nil {
		b.mu.Unlock()
		return b.readErr
	}
	b.nextID++
	id := b.nextID
	ch := make(chan cdpMessage, 1)
	b.pending[id] = ch
	b.mu.Unlock()

	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	b.wmu.Lock()
	_, err = b.w.Write(append(raw, 0))
	b.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: write to chromium: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			b.mu.Lock()
			defer b.mu.Unlock()
			return fmt.Errorf("%s: %w", method, b.readErr)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: devtools error %d: %s", method, m.Error.Code, m.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// page is one tab, attached through a flat session.
type page struct {
	b       *browser
	t       *testing.T
	session string
}

// NewPage opens a tab of width × height CSS pixels.
func (b *browser) NewPage(width, height int) *page {
	b.t.Helper()
	var target struct {
		TargetID string `json:"targetId"`
	}
	b.must("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct {
		SessionID string `json:"sessionId"`
	}
	b.must("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	p := &page{b: b, t: b.t, session: att.SessionID}
	for _, domain := range []string{"Page", "Runtime", "Log"} {
		p.must(domain+".enable", nil, nil)
	}
	p.Resize(width, height)
	return p
}

// Resize sets the viewport to width × height CSS pixels.
func (p *page) Resize(width, height int) {
	p.t.Helper()
	p.must("Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
}

func (b *browser) must(session, method string, params, out any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cdpCallTimeout)
	defer cancel()
	if err := b.call(ctx, session, method, params, out); err != nil {
		b.t.Fatal(err)
	}
}

func (p *page) must(method string, params, out any) {
	p.t.Helper()
	p.b.must(p.session, method, params, out)
}

// Navigate loads url (the page's scripts then run on their own; wait for their effects).
func (p *page) Navigate(url string) {
	p.t.Helper()
	var res struct {
		ErrorText string `json:"errorText"`
	}
	p.must("Page.navigate", map[string]any{"url": url}, &res)
	if res.ErrorText != "" {
		p.t.Fatalf("navigate to %s: %s", url, res.ErrorText)
	}
}

// Back goes one entry back in the tab's history, as the browser's back button does. It goes
// through the browser, not through history.back() in the page: a cross-document back could
// tear down the page's context while the evaluation that asked for it was still answering
// ("Inspected target navigated or closed", seen in CI).
func (p *page) Back() {
	p.t.Helper()
	var hist struct {
		CurrentIndex int `json:"currentIndex"`
		Entries      []struct {
			ID  int    `json:"id"`
			URL string `json:"url"`
		} `json:"entries"`
	}
	p.must("Page.getNavigationHistory", map[string]any{}, &hist)
	if hist.CurrentIndex < 1 || hist.CurrentIndex >= len(hist.Entries) {
		p.t.Fatalf("back: no earlier entry (index %d of %d)", hist.CurrentIndex, len(hist.Entries))
	}
	p.must("Page.navigateToHistoryEntry", map[string]any{"entryId": hist.Entries[hist.CurrentIndex-1].ID}, nil)
}

// Eval evaluates a JavaScript expression in the page (awaiting a promise) and decodes its
// JSON-serialisable value into out.
func (p *page) Eval(expr string, out any) error {
	var res struct {
		Result struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), cdpCallTimeout)
	defer cancel()
	err := p.b.call(ctx, p.session, "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true}, &res)
	if err != nil {
		return err
	}
	if d := res.ExceptionDetails; d != nil {
		return fmt.Errorf("evaluate: %s %s", d.Text, d.Exception.Description)
	}
	if out == nil || len(res.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(res.Result.Value, out)
}

func (p *page) MustEval(expr string, out any) {
	p.t.Helper()
	if err := p.Eval(expr, out); err != nil {
		p.t.Fatal(err)
	}
}

// Click scrolls the element matching selector into view and clicks its centre with the
// mouse, as a person would (the element must be visible and not covered).
func (p *page) Click(selector string) {
	p.t.Helper()
	sel, _ := json.Marshal(selector)
	var box struct {
		X, Y  float64
		Found bool
	}
	p.MustEval(`(() => {
		const e = document.querySelector(`+string(sel)+`);
		if (!e) return {found: false};
		e.scrollIntoView({block: "center"});
		const r = e.getBoundingClientRect();
		return {found: true, x: r.left + r.width / 2, y: r.top + r.height / 2};
	})()`, &box)
	if !box.Found {
		p.t.Fatalf("click: nothing matches %s", selector)
	}
	var hit bool
	p.MustEval(fmt.Sprintf(`document.querySelector(%s) === document.elementFromPoint(%g, %g)`, sel, box.X, box.Y), &hit)
	if !hit {
		p.t.Fatalf("click: %s is covered at (%g, %g)", selector, box.X, box.Y)
	}
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		p.must("Input.dispatchMouseEvent", map[string]any{
			"type": typ, "x": box.X, "y": box.Y, "button": "left", "clickCount": 1}, nil)
	}
}

// Type focuses the element matching selector and types text into it (input events fire).
func (p *page) Type(selector, text string) {
	p.t.Helper()
	sel, _ := json.Marshal(selector)
	var ok bool
	p.MustEval(`(() => { const e = document.querySelector(`+string(sel)+`); if (!e) return false; e.focus(); return document.activeElement === e; })()`, &ok)
	if !ok {
		p.t.Fatalf("type: cannot focus %s", selector)
	}
	p.must("Input.insertText", map[string]any{"text": text}, nil)
}

// SetColorScheme emulates prefers-color-scheme ("light" or "dark").
func (p *page) SetColorScheme(scheme string) {
	p.t.Helper()
	p.must("Emulation.setEmulatedMedia", map[string]any{
		"features": []map[string]string{{"name": "prefers-color-scheme", "value": scheme}}}, nil)
}

// Screenshot saves the viewport as a PNG.
func (p *page) Screenshot(path string) {
	p.t.Helper()
	var res struct {
		Data string `json:"data"`
	}
	p.must("Page.captureScreenshot", map[string]any{"format": "png"}, &res)
	png, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil {
		p.t.Fatal(err)
	}
	if !strings.HasPrefix(string(png), "\x89PNG") {
		p.t.Fatalf("screenshot is not a PNG")
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}
