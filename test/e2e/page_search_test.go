package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// searchPageState is what the search page shows, read from its DOM by searchStateJS.
type searchPageState struct {
	Loaded bool   `json:"loaded"`
	Busy   bool   `json:"busy"`
	URL    string `json:"url"`
	Query  string `json:"query"`
	Focus  string `json:"focus"`
	Hits   []struct {
		ID, Name, Path, Href, Kind, Size, Drive string
		Offline                                 bool
		// Thumb is the card's thumbnail: its address and natural width once loaded (0: none
		// or not loaded).
		ThumbSrc   string
		ThumbWidth int
		Snippets   []struct{ Text, Marks, Module, Where string }
	} `json:"hits"`
	Facets map[string][]struct {
		Value, Count, Pressed string
		Offline               bool // the value carries an offline badge (drives)
	} `json:"facets"`
	Summary  string `json:"summary"`
	PageInfo string `json:"pageInfo"`
	// Markup counts elements in the cards' names and paths: a name like "<b>x</b>.txt" must
	// stay text.
	Markup int `json:"markup"`
}

const searchStateJS = `(() => {
	const all = (s, root) => [...(root || document).querySelectorAll(s)];
	const facets = {};
	for (const b of all('[data-testid="facet-value"]')) {
		(facets[b.dataset.facet] = facets[b.dataset.facet] || []).push({
			Value: b.dataset.value, Count: b.querySelector(".count").textContent, Pressed: b.getAttribute("aria-pressed"),
			Offline: !!b.querySelector('[data-testid="drive-offline"]')});
	}
	return {
		loaded: document.body.getAttribute("data-loaded") === "true",
		busy: document.body.getAttribute("data-busy") === "true",
		url: location.pathname + location.search,
		query: document.getElementById("q").value,
		focus: document.activeElement ? document.activeElement.id : "",
		hits: all('[data-testid="hit"]').map((h) => ({
			ID: h.dataset.id, Kind: h.dataset.kind,
			Name: h.querySelector('[data-field="name"]').textContent,
			Href: h.querySelector('[data-field="name"]').getAttribute("href"),
			Path: h.querySelector('[data-field="path"]').textContent,
			Size: h.querySelector('[data-field="size"]').textContent,
			Drive: all('[data-field="drive"]', h).map((d) => d.textContent).join(","),
			Offline: !!h.querySelector('[data-testid="offline"]'),
			ThumbSrc: (h.querySelector("img.thumb-img") || {}).src || "",
			ThumbWidth: (() => { const i = h.querySelector("img.thumb-img"); return i && i.complete ? i.naturalWidth : 0; })(),
			Snippets: all('[data-testid="snippet"]', h).map((s) => ({
				Text: s.querySelector(".snippet-text").textContent,
				Marks: all("mark", s).map((m) => m.textContent).join("|"),
				Module: s.dataset.module, Where: s.querySelector(".where").textContent})),
		})),
		facets,
		summary: document.getElementById("summary").textContent,
		pageInfo: document.getElementById("pager").hidden ? "" : document.getElementById("page-info").textContent,
		markup: all('[data-field="name"] *, [data-field="path"] *').length,
	};
})()`

func (p *page) searchState() (searchPageState, error) {
	var st searchPageState
	err := p.Eval(searchStateJS, &st)
	return st, err
}

// waitSearch polls the search page until it has finished loading and check accepts it.
func (p *page) waitSearch(d time.Duration, what string, check func(searchPageState) error) searchPageState {
	p.t.Helper()
	var st searchPageState
	waitUntil(p.t, d, what, func() error {
		var err error
		if st, err = p.searchState(); err != nil {
			return err
		}
		if !st.Loaded || st.Busy {
			return fmt.Errorf("page still loading: %+v", st)
		}
		return check(st)
	})
	return st
}

// Press sends one key (as typed on a keyboard) to the focused element.
func (p *page) Press(key, code string, keyCode int, text string) {
	p.t.Helper()
	for _, typ := range []string{"keyDown", "keyUp"} {
		params := map[string]any{"type": typ, "key": key, "code": code, "windowsVirtualKeyCode": keyCode}
		if typ == "keyDown" && text != "" {
			params["text"] = text
		}
		p.must("Input.dispatchKeyEvent", params, nil)
	}
}

// tinyPNG is a real PNG picture of w × h pixels in one colour.
func tinyPNG(t *testing.T, w, h int, c color.RGBA) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The search page in headless Chromium against a real daemon, Redis and modules (the example
// module, then the thumbnail module): a word found only in the files' module content
// ("world", from the example module's text) finds them with the word highlighted in their
// snippets; a facet narrows the results; the card's link opens the file; back and forward
// restore the query and filters from the URL; a file name holding HTML stays text; "/"
// focuses the search box; picture cards show the thumbnail the module made, loaded from
// /files/<id>/thumbnail; an unplugged drive is marked offline on the cards and in the drive
// facet. Screenshots go to $PAGE_SCREENSHOT_DIR (docs/search-documents.png and
// docs/search-photos.png are made this way).
func TestPageSearch(t *testing.T) {
	t.Parallel()
	const mod = "example-module"
	s := newStack(t, []module{{Name: mod, UID: "e1"}, {Name: "thumbnail", UID: "th1"}})
	br := startBrowser(t)
	report := "Quarterly report for the board, second draft."
	files := map[string]string{
		"docs/quarterly report.txt":             report,
		"docs/<b>x</b>.txt":                     "a name holding markup",
		"docs/<img src=x onerror=alert(1)>.txt": "a name holding an element",
		"docs/garden plan.md":                   "# Plan for the garden\n",
		"notes/shopping list.txt":               "milk, bread, apples",
		"docs/meeting minutes.txt":              "minutes of the June meeting",
	}
	var ids []string
	for rel, content := range files {
		ids = append(ids, s.write(rel, content))
	}
	// Pictures on an archive drive, unplugged later: their cards say so.
	photos := s.plug("usb1", map[string]string{
		"photos/family/lake.png":     tinyPNG(t, 32, 24, color.RGBA{40, 120, 200, 255}),
		"photos/family/mountain.png": tinyPNG(t, 40, 30, color.RGBA{90, 160, 80, 255}),
	})
	for _, id := range photos {
		ids = append(ids, id)
	}
	all := len(files) + len(photos)
	s.Daemon.Start()
	s.startModule("example", bin.example, mod)
	s.startModule("thumbnail", moduleBinary(t, "thumbnail-module"), "thumbnail", "TIMEOUT", "60")
	waitUntil(t, 120*time.Second, "every file through both modules", s.docsDone(ids, noted))
	waitUntil(t, 60*time.Second, "the module's text in the search index", func() error {
		var r struct {
			Total int `json:"total"`
		}
		resp, err := http.Get("http://" + s.HTTPAddr + "/api/search?q=world")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return err
		}
		if r.Total != all {
			return fmt.Errorf("%d hits for world, want %d", r.Total, all)
		}
		return nil
	})

	p := br.NewPage(1100, 700)
	base := "http://" + s.HTTPAddr
	p.Navigate(base + "/")
	p.waitSearch(30*time.Second, "the empty search page", func(st searchPageState) error { return nil })

	// "/" focuses the search box; typing and Enter search.
	p.MustEval(`document.body.focus(), document.activeElement && document.activeElement.blur()`, nil)
	p.Press("/", "Slash", 191, "/")
	if st, _ := p.searchState(); st.Focus != "q" || st.Query != "" {
		t.Fatalf(`after "/": focus on %q, box holds %q; want the empty search box focused`, st.Focus, st.Query)
	}
	p.Type("#q", "world")
	p.Press("Enter", "Enter", 13, "\r")
	st := p.waitSearch(30*time.Second, "every file found by its content", func(st searchPageState) error {
		if st.URL != "/?q=world" || len(st.Hits) != all {
			return fmt.Errorf("url %q, %d hits (%s)", st.URL, len(st.Hits), st.Summary)
		}
		return nil
	})
	for _, h := range st.Hits {
		if len(h.Snippets) == 0 || h.Snippets[0].Marks != "world" || !strings.Contains(h.Snippets[0].Text, "hello world") || h.Snippets[0].Module != mod {
			t.Errorf("card %s (%s): snippets %+v, want %q with world highlighted, from %s", h.Name, h.Path, h.Snippets, "hello world", mod)
		}
		if h.Href != "/files/"+h.ID {
			t.Errorf("card %s links to %q, want /files/%s", h.Name, h.Href, h.ID)
		}
	}
	// Names holding HTML are text ("<b>x</b>.txt" is the file "b>.txt" in directory "<b>x<").
	var poison int
	for _, h := range st.Hits {
		if h.Path == "docs/<b>x</b>.txt" && h.Name == "b>.txt" ||
			h.Path == "docs/<img src=x onerror=alert(1)>.txt" && h.Name == "<img src=x onerror=alert(1)>.txt" {
			poison++
		}
	}
	if poison != 2 || st.Markup != 0 {
		t.Errorf("the cards of names holding HTML: %d of 2 found as text, %d elements made from names or paths", poison, st.Markup)
	}
	if ext := st.Facets["extension"]; len(ext) == 0 || ext[0].Value != "txt" || ext[0].Count != "5" {
		t.Errorf("extension facet %+v, want txt (5) first", ext)
	}
	for _, d := range st.Facets["drive"] {
		if d.Offline {
			t.Errorf("drive %s marked offline while plugged in", d.Value)
		}
	}
	// The pictures' cards show their thumbnails, loaded; the other cards a kind icon.
	st = p.waitSearch(30*time.Second, "the pictures' thumbnails loaded", func(st searchPageState) error {
		for _, h := range st.Hits {
			if h.Kind == "image" && (h.ThumbWidth <= 0 || !strings.HasSuffix(h.ThumbSrc, "/files/"+h.ID+"/thumbnail")) {
				return fmt.Errorf("picture card %s: thumbnail %q, natural width %d", h.Name, h.ThumbSrc, h.ThumbWidth)
			}
		}
		return nil
	})
	for _, h := range st.Hits {
		if h.Kind != "image" && h.ThumbSrc != "" {
			t.Errorf("card %s (%s) has a thumbnail %q", h.Name, h.Kind, h.ThumbSrc)
		}
	}

	// Narrow by a facet: .txt files only.
	p.Click(`[data-testid="facet-value"][data-facet="extension"][data-value="txt"]`)
	st = p.waitSearch(30*time.Second, "the txt files only", func(st searchPageState) error {
		if st.URL != "/?q=world&extension=txt" || len(st.Hits) != 5 {
			return fmt.Errorf("url %q, %d hits", st.URL, len(st.Hits))
		}
		return nil
	})
	dir := screenshotDir(t)
	p.Screenshot(filepath.Join(dir, "search-documents.png"))

	// Open the file: the link answers 200 with the file's bytes, and the browser shows them.
	reportID := docID(report)
	var href string
	for _, h := range st.Hits {
		if h.ID == reportID {
			href = h.Href
		}
	}
	if href == "" {
		t.Fatalf("no card for the report among %+v", st.Hits)
	}
	resp, err := http.Get(base + href)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(got) != report {
		t.Fatalf("GET %s: %d %q, want 200 %q", href, resp.StatusCode, got, report)
	}
	p.Click(`[data-testid="hit"][data-id="` + reportID + `"] [data-testid="hit-link"]`)
	waitUntil(t, 30*time.Second, "the file open in the browser", func() error {
		var text string
		if err := p.Eval(`location.pathname + "\n" + (document.body ? document.body.innerText : "")`, &text); err != nil {
			return err
		}
		if want := "/files/" + reportID + "\n" + report; strings.TrimSpace(text) != want {
			return fmt.Errorf("page shows %q", text)
		}
		return nil
	})

	// Back: the query and the filter come back from the URL; back again: the query alone.
	p.Back()
	st = p.waitSearch(30*time.Second, "the filtered results again", func(st searchPageState) error {
		if st.URL != "/?q=world&extension=txt" || st.Query != "world" || len(st.Hits) != 5 {
			return fmt.Errorf("url %q, box %q, %d hits", st.URL, st.Query, len(st.Hits))
		}
		return nil
	})
	if ext := st.Facets["extension"]; len(ext) == 0 || ext[0].Pressed != "true" {
		t.Errorf("the txt facet is not shown pressed after going back: %+v", ext)
	}
	p.Back()
	p.waitSearch(30*time.Second, "the unfiltered results again", func(st searchPageState) error {
		if st.URL != "/?q=world" || st.Query != "world" || len(st.Hits) != all {
			return fmt.Errorf("url %q, box %q, %d hits", st.URL, st.Query, len(st.Hits))
		}
		return nil
	})

	// The sort selector: by name, in the URL too.
	p.MustEval(`(() => { const s = document.getElementById("sort"); s.value = "name"; s.dispatchEvent(new Event("change")); })()`, nil)
	p.waitSearch(30*time.Second, "the results by name", func(st searchPageState) error {
		if st.URL != "/?q=world&sort=name" || len(st.Hits) != all || st.Hits[0].Name != "<img src=x onerror=alert(1)>.txt" {
			return fmt.Errorf("url %q, %d hits %+v", st.URL, len(st.Hits), st.Hits)
		}
		return nil
	})

	// Paging: 3 a page, next and previous; every file seen once.
	p.Navigate(base + "/?q=world&sort=name&limit=3")
	seen := map[string]bool{}
	for pg := 1; pg <= 3; pg++ {
		want := fmt.Sprintf("/?q=world&sort=name&page=%d&limit=3", pg)
		if pg == 1 {
			want = "/?q=world&sort=name&limit=3"
		}
		st = p.waitSearch(30*time.Second, fmt.Sprintf("page %d", pg), func(st searchPageState) error {
			if st.URL != want || st.PageInfo != fmt.Sprintf("Page %d of 3", pg) || len(st.Hits) != min(3, all-3*(pg-1)) {
				return fmt.Errorf("url %q, %q, %d hits", st.URL, st.PageInfo, len(st.Hits))
			}
			return nil
		})
		for _, h := range st.Hits {
			seen[h.ID] = true
		}
		if pg < 3 {
			p.Click(`#next`)
		}
	}
	if len(seen) != all {
		t.Errorf("3 pages showed %d files, want %d", len(seen), all)
	}
	p.Click(`#prev`)
	p.waitSearch(30*time.Second, "page 2 again", func(st searchPageState) error {
		if st.URL != "/?q=world&sort=name&page=2&limit=3" || len(st.Hits) != 3 {
			return fmt.Errorf("url %q, %d hits", st.URL, len(st.Hits))
		}
		return nil
	})

	// The drive is unplugged; a shared link with a kind filter shows the pictures, offline.
	s.unplug("usb1")
	waitUntil(t, 60*time.Second, "the pictures offline in the index", func() error {
		var r struct {
			Hits []struct {
				Offline bool `json:"offline"`
			} `json:"hits"`
		}
		resp, err := http.Get(base + "/api/search?q=world&kind=image")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return err
		}
		if len(r.Hits) != 2 || !r.Hits[0].Offline || !r.Hits[1].Offline {
			return fmt.Errorf("hits %+v", r.Hits)
		}
		return nil
	})
	p.Navigate(base + "/?" + url.Values{"q": {"world"}, "kind": {"image"}}.Encode())
	st = p.waitSearch(30*time.Second, "the pictures", func(st searchPageState) error {
		if len(st.Hits) != 2 || st.Hits[0].Kind != "image" || st.Hits[1].Kind != "image" {
			return fmt.Errorf("%d hits %+v", len(st.Hits), st.Hits)
		}
		return nil
	})
	for _, h := range st.Hits {
		if !h.Offline || h.Drive != "usb1" {
			t.Errorf("picture card %s: offline badge %v, drive %q; want offline on usb1", h.Name, h.Offline, h.Drive)
		}
	}
	// The thumbnails live in the metadata directory: they still show with the drive away.
	p.waitSearch(30*time.Second, "the offline pictures' thumbnails", func(st searchPageState) error {
		for _, h := range st.Hits {
			if h.ThumbWidth <= 0 {
				return fmt.Errorf("picture card %s: thumbnail %q not loaded", h.Name, h.ThumbSrc)
			}
		}
		if d := st.Facets["drive"]; len(d) != 1 || d[0].Value != "usb1" || !d[0].Offline {
			return fmt.Errorf("drive facet %+v, want usb1 with its offline badge", d)
		}
		return nil
	})
	p.Screenshot(filepath.Join(dir, "search-photos.png"))
	t.Logf("screenshots in %s", dir)

	if probs := br.Problems(); len(probs) > 0 {
		t.Errorf("the page reported problems (console errors, exceptions, CSP violations):\n%s", strings.Join(probs, "\n"))
	}
}

// The search page and the text module: a word that only the PDF's text holds (on its second
// page) finds the PDF, whose card shows the word highlighted in a snippet that says which
// page; the kind facet narrows the results and the module's filterable attribute text.format
// is a facet too; the card opens the PDF (served inline as application/pdf); back restores the
// query and the filter.
func TestPageSearchFindsAWordInsideAPDF(t *testing.T) {
	t.Parallel()
	pdf, _ := textModuleFixtures(t)
	s := newStack(t, []module{{Name: "text", UID: "text-page", Filterable: []string{"text.format"}}})
	copyFile(t, pdf, filepath.Join(s.Files, "docs", "report.pdf"))
	s.write("docs/notes.txt", "plain notes without the special words")
	s.Daemon.Start()
	s.startModule("text", bin.text, "text")
	base := "http://" + s.HTTPAddr
	waitUntil(t, 120*time.Second, "the PDF's words in the search index", func() error {
		var r struct {
			Total int `json:"total"`
		}
		resp, err := http.Get(base + "/api/search?q=wombatpdfword")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return err
		}
		if r.Total != 1 {
			return fmt.Errorf("%d hits, want 1", r.Total)
		}
		return nil
	})

	br := startBrowser(t)
	p := br.NewPage(1100, 700)
	p.Navigate(base + "/")
	p.waitSearch(30*time.Second, "the empty search page", func(st searchPageState) error { return nil })
	p.Type("#q", "wombatpdfword")
	p.Press("Enter", "Enter", 13, "\r")
	st := p.waitSearch(30*time.Second, "the PDF found by a word inside it", func(st searchPageState) error {
		if st.URL != "/?q=wombatpdfword" || len(st.Hits) != 1 {
			return fmt.Errorf("url %q, %d hits (%s)", st.URL, len(st.Hits), st.Summary)
		}
		return nil
	})
	h := st.Hits[0]
	if h.Path != "docs/report.pdf" || h.Kind != "document" || len(h.Snippets) != 1 || h.Snippets[0].Marks != "wombatpdfword" ||
		h.Snippets[0].Module != "text" || !strings.HasSuffix(h.Snippets[0].Where, "page 2") {
		t.Fatalf("card %+v: want docs/report.pdf with wombatpdfword highlighted in a snippet from page 2", h)
	}
	if f := st.Facets["text.format"]; len(f) != 1 || f[0].Value != "pdf" || f[0].Count != "1" {
		t.Errorf("text.format facet %+v, want pdf (1)", f)
	}

	p.Click(`[data-testid="facet-value"][data-facet="kind"][data-value="document"]`)
	p.waitSearch(30*time.Second, "documents only", func(st searchPageState) error {
		if st.URL != "/?q=wombatpdfword&kind=document" || len(st.Hits) != 1 || st.Facets["kind"][0].Pressed != "true" {
			return fmt.Errorf("url %q, %d hits, kind facet %+v", st.URL, len(st.Hits), st.Facets["kind"])
		}
		return nil
	})
	resp, err := http.Get(base + h.Href)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want, err := os.ReadFile(pdf)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/pdf" || !bytes.Equal(got, want) ||
		!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "inline") {
		t.Fatalf("GET %s: %d %q %q, %d bytes; want the PDF inline", h.Href, resp.StatusCode, resp.Header.Get("Content-Type"),
			resp.Header.Get("Content-Disposition"), len(got))
	}
	p.Click(`[data-testid="hit-link"]`)
	waitUntil(t, 30*time.Second, "the PDF open in the browser", func() error {
		var path string
		if err := p.Eval(`location.pathname`, &path); err != nil {
			return err
		}
		if path != h.Href {
			return fmt.Errorf("at %q", path)
		}
		return nil
	})
	p.Back()
	p.waitSearch(30*time.Second, "the filtered results again", func(st searchPageState) error {
		if st.URL != "/?q=wombatpdfword&kind=document" || st.Query != "wombatpdfword" || len(st.Hits) != 1 {
			return fmt.Errorf("url %q, box %q, %d hits", st.URL, st.Query, len(st.Hits))
		}
		return nil
	})
	if probs := br.Problems(); len(probs) > 0 {
		t.Errorf("the page reported problems (console errors, exceptions, CSP violations):\n%s", strings.Join(probs, "\n"))
	}
}
