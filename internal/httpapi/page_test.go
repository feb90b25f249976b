package httpapi

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func pageServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mountPage(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, hdr ...string) (*http.Response, string) {
	t.Helper()
	return send(t, http.MethodGet, url, "", hdr...)
}

// GET / is the search page and GET /status the status page, both with their security headers;
// the files they reference are served with their types, revalidate to 304, and nothing else is.
func TestPageServed(t *testing.T) {
	t.Parallel()
	srv := pageServer(t)
	for _, pg := range []struct{ path, script, marker string }{
		{"/", "app.js", `id="hits"`},
		{"/status", "status.js", `id="failures"`},
	} {
		checkPage(t, srv, pg.path, pg.script, pg.marker)
	}

	for _, p := range []string{"/index.html", "/status.html", "/status/", "/nope", "/assets/", "/assets/nope.js", "/assets/index.html", "/assets/status.html", "/web/app.js"} {
		if resp, _ := get(t, srv.URL+p); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}
	resp, err := http.Post(srv.URL+"/", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d, want 405", resp.StatusCode)
	}
}

func checkPage(t *testing.T, srv *httptest.Server, page, script, marker string) {
	t.Helper()
	resp, body := get(t, srv.URL+page)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /: %d", resp.StatusCode)
	}
	for h, want := range map[string]string{
		"Content-Type":           "text/html; charset=utf-8",
		"X-Content-Type-Options": "nosniff",
		"X-Frame-Options":        "DENY",
		"Cache-Control":          "no-cache",
	} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("GET / %s: got %q, want %q", h, got, want)
		}
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-") {
		t.Errorf("CSP %q allows unsafe sources", csp)
	}
	if !strings.Contains(body, `<script src="/assets/`+script+`" defer></script>`) || !strings.Contains(body, marker) {
		t.Fatalf("GET %s is not the page it should be:\n%s", page, body)
	}

	// Every /assets/ file the page references, with its type.
	wantType := map[string]string{
		"/assets/" + script: "text/javascript; charset=utf-8",
		"/assets/dom.js":    "text/javascript; charset=utf-8",
		"/assets/style.css": "text/css; charset=utf-8",
		"/assets/icon.svg":  "image/svg+xml",
	}
	refs := regexp.MustCompile(`(?:src|href)="(/assets/[^"]+)"`).FindAllStringSubmatch(body, -1)
	seen := map[string]bool{}
	for _, m := range refs {
		seen[m[1]] = true
	}
	for p, ct := range wantType {
		if !seen[p] {
			t.Errorf("the page does not reference %s", p)
		}
		resp, b := get(t, srv.URL+p)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != ct || len(b) == 0 {
			t.Errorf("GET %s: %d %q (%d bytes), want 200 %q", p, resp.StatusCode, resp.Header.Get("Content-Type"), len(b), ct)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", p)
		}
		etag := resp.Header.Get("ETag")
		if again, _ := get(t, srv.URL+p, "If-None-Match", etag); etag == "" || again.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with If-None-Match %q: %d, want 304", p, etag, again.StatusCode)
		}
	}
	for p := range seen {
		if _, ok := wantType[p]; !ok {
			t.Errorf("%s references %s, which this test does not check", page, p)
		}
	}
}

// The page loads nothing from elsewhere and keeps to what its CSP allows: no external URL, no
// inline script, style or event handler, and no HTML built from strings (API data is text).
func TestPageSelfContained(t *testing.T) {
	t.Parallel()
	external := regexp.MustCompile(`(?i)(https?|wss?|ftp):|["'(=]\s*//|@import`)
	err := fs.WalkDir(web, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := web.ReadFile(p)
		if err != nil {
			return err
		}
		// An SVG must name its XML namespace; that URL is an identifier, never fetched.
		s := strings.ReplaceAll(string(b), `xmlns="http://www.w3.org/2000/svg"`, "")
		for _, m := range external.FindAllStringIndex(s, -1) {
			t.Errorf("%s: external reference near %q", p, s[max(0, m[0]-30):min(len(s), m[1]+30)])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{"index.html", "status.html"} {
		checkHTML(t, name)
	}
	for _, name := range []string{"dom.js", "app.js", "status.js"} {
		js, _ := web.ReadFile("web/" + name)
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", ".style."} {
			if strings.Contains(string(js), bad) {
				t.Errorf("%s uses %s", name, bad)
			}
		}
	}
}

func checkHTML(t *testing.T, name string) {
	t.Helper()
	html, err := web.ReadFile("web/" + name)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`),        // inline script
		regexp.MustCompile(`(?i)\sstyle\s*=`),                      // inline style attribute
		regexp.MustCompile(`(?i)<style`),                           // inline style sheet
		regexp.MustCompile(`(?i)\son[a-z]+\s*=`),                   // inline event handler
		regexp.MustCompile(`(?i)(src|href)\s*=\s*"(?:[a-z]+:|//)`), // absolute URL
	} {
		if bad.MatchString(string(html)) {
			t.Errorf("%s matches %s: %q", name, bad, bad.FindString(string(html)))
		}
	}
	// dom.js holds the helpers both page scripts use: it must come first.
	if tags := regexp.MustCompile(`<script[^>]*>`).FindAllString(string(html), -1); len(tags) == 0 || !strings.Contains(tags[0], `src="/assets/dom.js"`) {
		t.Errorf("%s: the first script is not /assets/dom.js: %q", name, tags)
	}
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(string(html), -1) {
		if !strings.Contains(tag, ` src="/assets/`) {
			t.Errorf("%s: script without a src of its own: %s", name, tag)
		}
	}
}

// The daemon's server (WithOps) serves the page next to the API.
func TestPageWithOps(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, nil)
	for _, p := range []string{"/", "/status"} {
		resp, body := get(t, d.base+p)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Home-Index") {
			t.Fatalf("GET %s: %d", p, resp.StatusCode)
		}
	}
	if resp, _ := get(t, d.base+"/api/nope"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /api/nope: %d, want 404", resp.StatusCode)
	}
}
