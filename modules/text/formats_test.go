package text

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/sdk"
	"github.com/rs/zerolog"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// extract runs Extract with default limits and fails the test on an error.
func extract(t *testing.T, path, format string) *Doc {
	t.Helper()
	d, err := Extract(context.Background(), path, format, Limits{})
	if err != nil {
		t.Fatalf("Extract(%s, %s): %v", filepath.Base(path), format, err)
	}
	return d
}

func allText(d *Doc) string {
	var b strings.Builder
	for _, s := range d.Segments {
		b.WriteString(s.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// segmentWith returns the segment holding word, failing the test when none does.
func segmentWith(t *testing.T, d *Doc, word string) map[string]any {
	t.Helper()
	for _, s := range d.Segments {
		if strings.Contains(s.Text, word) {
			return s.Fields
		}
	}
	t.Fatalf("no segment holds %q; text:\n%s", word, allText(d))
	return nil
}

func write(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestChromiumPDF: a 3-page PDF printed by headless Chromium gives one segment per page with
// its page number, and its title, language, page count and dates.
func TestChromiumPDF(t *testing.T) {
	t.Parallel()
	d := extract(t, filepath.Join(fixtureDir(t), "sample.pdf"), "pdf")
	for word, page := range map[string]int{"aardvarkpdf": 1, "bumblebeepdf": 2, "chinchillapdf": 3} {
		if got := segmentWith(t, d, word)["page"]; got != page {
			t.Errorf("%s on page %v, want %d", word, got, page)
		}
	}
	text := allText(d)
	for _, w := range []string{"quick brown fox", "café and naïve", "“quotes”", "Quarterly report"} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
	if d.Pages != 3 || d.Title != "Quarterly Zebra Report" || d.Language != "en" || d.Created.IsZero() || d.Modified.IsZero() {
		t.Errorf("pages %d, title %q, language %q, created %v, modified %v", d.Pages, d.Title, d.Language, d.Created, d.Modified)
	}
	if time.Since(d.Created) > time.Hour || time.Since(d.Created) < -time.Hour {
		t.Errorf("created %v: Chromium printed it just now", d.Created)
	}
}

// TestPDFOwnerPasswordOnly: a PDF encrypted with an empty user password (only an owner
// password, as many "protected" PDFs are) is read.
func TestPDFOwnerPasswordOnly(t *testing.T) {
	t.Parallel()
	d := extract(t, filepath.Join(fixtureDir(t), "owner-only.pdf"), "pdf")
	if segmentWith(t, d, "bumblebeepdf")["page"] != 2 {
		t.Errorf("segments %v", d.Segments)
	}
}

// TestPythonDocx: a DOCX written by python3-docx: body and table text, title, author,
// language and dates from docProps/core.xml.
func TestPythonDocx(t *testing.T) {
	t.Parallel()
	d := extract(t, filepath.Join(fixtureDir(t), "sample.docx"), "docx")
	text := allText(d)
	for _, w := range []string{"A heading in Word", "docxonlyword lives in this document", "tablecellword"} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
	want := time.Date(2019, 7, 14, 10, 30, 0, 0, time.UTC)
	if d.Title != "Docx Sample" || d.Author != "Grace Hopper" || d.Language != "en" || !d.Created.Equal(want) || d.Modified.Year() != 2020 {
		t.Errorf("title %q, author %q, language %q, created %v, modified %v", d.Title, d.Author, d.Language, d.Created, d.Modified)
	}
	f := d.Result().Document[Name].(map[string]any)
	if f["created"] != "2019-07-14T10:30:00Z" || f["created_unix"] != want.Unix() || f["words"].(int) < 15 {
		t.Errorf("fields %v", f)
	}
}

// TestPythonOffice: XLSX (openpyxl) by sheet, ODT, ODS by sheet and ODP by slide (odfpy).
func TestPythonOffice(t *testing.T) {
	t.Parallel()
	dir := fixtureDir(t)
	x := extract(t, dir+"/sample.xlsx", "xlsx")
	if segmentWith(t, x, "xlsxonlyword")["sheet"] != "Budget" || segmentWith(t, x, "secondsheetword")["sheet"] != "Notes" ||
		!strings.Contains(allText(x), "12.5") || x.Title != "Workbook Sample" || x.Author != "Alan Turing" {
		t.Errorf("xlsx: %+v", x)
	}
	o := extract(t, dir+"/sample.odt", "odt")
	if !strings.Contains(allText(o), "odtonlyword is in this paragraph") || o.Title != "ODT Sample" || o.Author != "Emmy Noether" || o.Created.Year() != 2018 {
		t.Errorf("odt: %+v", o)
	}
	s := extract(t, dir+"/sample.ods", "ods")
	if segmentWith(t, s, "odsfirstword")["sheet"] != "First" || segmentWith(t, s, "odssecondword")["sheet"] != "Second" {
		t.Errorf("ods: %+v", s.Segments)
	}
	p := extract(t, dir+"/sample.odp", "odp")
	if segmentWith(t, p, "odpslideone")["slide"] != 1 || segmentWith(t, p, "odpslidetwo")["slide"] != 2 || p.Pages != 2 {
		t.Errorf("odp: %+v", p.Segments)
	}
}

// TestPPTXEPUBRTF: slides in number order (10 after 2), EPUB chapters in spine order with their
// titles (a percent-encoded href too), and RTF text with code-page and Unicode escapes.
func TestPPTXEPUBRTF(t *testing.T) {
	t.Parallel()
	dir := fixtureDir(t)
	p := extract(t, dir+"/sample.pptx", "pptx")
	if segmentWith(t, p, "pptxslideone")["slide"] != 1 || segmentWith(t, p, "pptxslideten")["slide"] != 3 ||
		p.Title != "Deck Sample" || p.Created.Year() != 2021 || !strings.Contains(allText(p), "Slide about pptxslidetwo") {
		t.Errorf("pptx: %+v", p)
	}
	e := extract(t, dir+"/sample.epub", "epub")
	c1, c2 := segmentWith(t, e, "epubchapterone"), segmentWith(t, e, "epubchaptertwo")
	if c1["chapter"] != 1 || c1["chapter_title"] != "Letter One" || c2["chapter"] != 2 || e.Title != "Epub Sample" ||
		e.Author != "Mary Shelley" || e.Language != "en" || e.Modified.Year() != 2020 || strings.Contains(allText(e), "color:red") {
		t.Errorf("epub: %+v", e)
	}
	r := extract(t, dir+"/sample.rtf", "rtf")
	text := allText(r)
	for _, w := range []string{"rtfonlyword is here", "Café and naïve", "Bold text ends"} {
		if !strings.Contains(text, w) {
			t.Errorf("rtf text lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "Times New Roman") || strings.Contains(text, "89504e47") || strings.Contains(text, "Hand") ||
		r.Title != "RTF Sample" || r.Author != "Ada Lovelace" || r.Created.Year() != 2017 {
		t.Errorf("rtf: %q title %q author %q created %v", text, r.Title, r.Author, r.Created)
	}
}

// TestEncodings: UTF-8, UTF-16 with either byte-order mark, and Windows-1252 are detected and
// decoded; binary content is skipped.
func TestEncodings(t *testing.T) {
	t.Parallel()
	const s = "Crème brûlée, naïve café: the encodingword test.\n"
	le, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String(s)
	be, _ := unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewEncoder().String(s)
	cp, _ := charmap.Windows1252.NewEncoder().String(s + "“smart quotes” — dash\n")
	for _, tc := range []struct {
		name, content, enc string
	}{
		{"utf8.txt", s, "utf-8"},
		{"bom.txt", "\xEF\xBB\xBF" + s, "utf-8"},
		{"le.txt", le, "utf-16le"},
		{"be.txt", be, "utf-16be"},
		{"cp1252.txt", cp, "windows-1252"},
	} {
		d := extract(t, write(t, tc.name, []byte(tc.content)), "plain")
		if got := allText(d); !strings.Contains(got, "Crème brûlée, naïve café: the encodingword test.") || d.Encoding != tc.enc {
			t.Errorf("%s: encoding %q, text %q", tc.name, d.Encoding, got)
		}
		if tc.enc == "windows-1252" && !strings.Contains(allText(d), "“smart quotes” — dash") {
			t.Errorf("cp1252 text %q", allText(d))
		}
	}
	bin := make([]byte, 4096)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	if d := extract(t, write(t, "blob.txt", bin), "plain"); d.Skipped == "" || len(d.Segments) != 0 {
		t.Errorf("binary: skipped %q, segments %d", d.Skipped, len(d.Segments))
	}
}

// TestTextFormats: Markdown title, CSV/TSV fields, JSON strings, XML text, HTML visible text
// without script or style, source code.
func TestTextFormats(t *testing.T) {
	t.Parallel()
	md := extract(t, write(t, "a.md", []byte("Intro line\n\n# The Markdown Title\n\nSome *markdownword* text.\n")), "markdown")
	if md.Title != "The Markdown Title" || !strings.Contains(allText(md), "markdownword") {
		t.Errorf("markdown: %q %q", md.Title, allText(md))
	}
	csv := extract(t, write(t, "a.csv", []byte("name,comment\nx,\"quoted, csvword\"\n")), "csv")
	if !strings.Contains(allText(csv), "x\tquoted, csvword") {
		t.Errorf("csv: %q", allText(csv))
	}
	tsv := extract(t, write(t, "a.tsv", []byte("a\tb\ntsvword\tc\n")), "tsv")
	if !strings.Contains(allText(tsv), "tsvword\tc") {
		t.Errorf("tsv: %q", allText(tsv))
	}
	js := extract(t, write(t, "a.json", []byte(`{"title":"jsonword here","n":[1,2,{"deep":"nested value"}],"ok":true}`)), "json")
	if got := allText(js); !strings.Contains(got, "jsonword here") || !strings.Contains(got, "nested value") || strings.Contains(got, "true") {
		t.Errorf("json: %q", got)
	}
	x := extract(t, write(t, "a.xml", []byte(`<?xml version="1.0" encoding="ISO-8859-1"?><r><a>xmlword</a><b attr="no">caf`+"\xe9"+`</b></r>`)), "xml")
	if got := allText(x); !strings.Contains(got, "xmlword") || !strings.Contains(got, "café") || strings.Contains(got, "no") {
		t.Errorf("xml: %q", got)
	}
	h := extract(t, write(t, "a.html", []byte(`<html lang="de-DE"><head><title>Page Title</title><style>.x{color:red}</style>
<script>var hiddenword = 1;</script></head><body><p>Visible <b>htmlword</b> text</p><noscript>nojs</noscript><div>Second&nbsp;block</div></body></html>`)), "html")
	if got := allText(h); !strings.Contains(got, "Visible htmlword text\nSecond block") || strings.Contains(got, "hiddenword") ||
		strings.Contains(got, "color") || strings.Contains(got, "nojs") || h.Title != "Page Title" || h.Language != "de" {
		t.Errorf("html: %q title %q lang %q", got, h.Title, h.Language)
	}
	code := extract(t, write(t, "main.go", []byte("package main\n\n// codeword in a comment\nfunc main() {}\n")), "code")
	if !strings.Contains(allText(code), "codeword in a comment") {
		t.Errorf("code: %q", allText(code))
	}
}

// TestDetect: the format comes from the extension where it is specific, else from the type.
func TestDetect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ typ, path, want string }{
		{"application/zip", "/f/report.docx", "docx"},
		{"application/pdf", "/f/x.bin", "pdf"},
		{"text/plain; charset=utf-8", "/f/notes.md", "markdown"},
		{"text/plain; charset=utf-8", "/f/noext", "plain"},
		{"text/html; charset=utf-8", "/f/index", "html"},
		{"application/octet-stream", "/f/main.rs", "code"},
		{"application/octet-stream", "/f/Makefile", "plain"},
		{"image/png", "/f/p.png", ""},
		{"application/octet-stream", "/f/blob", ""},
		{"application/vnd.oasis.opendocument.text", "/f/x", "odt"},
		{"application/epub+zip", "/f/b.EPUB", "epub"},
	} {
		got := ""
		if f := detect(tc.typ, tc.path); f != nil {
			got = f.name
		}
		if got != tc.want {
			t.Errorf("detect(%q, %q) = %q, want %q", tc.typ, tc.path, got, tc.want)
		}
	}
}

// TestResultShape: fields go under "text", dates as RFC 3339 plus _unix, segments keep their
// location fields in the content JSON.
func TestResultShape(t *testing.T) {
	t.Parallel()
	d := extract(t, filepath.Join(fixtureDir(t), "sample.pdf"), "pdf")
	b, err := json.Marshal(d.Result().Document)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	f := doc["text"]
	for _, k := range []string{"format", "title", "language", "pages", "words", "created", "created_unix", "modified", "modified_unix"} {
		if _, ok := f[k]; !ok {
			t.Errorf("no text.%s in %s", k, b)
		}
	}
	if _, err := time.Parse(time.RFC3339, f["created"].(string)); err != nil {
		t.Errorf("created %v: %v", f["created"], err)
	}
}

func TestParseDate(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"D:20261126200140+00'00'": "2026-11-26T20:01:40Z",
		"D:20190714103000+02'00'": "2019-07-14T10:30:00+02:00",
		"D:20190714103000-05'30":  "2019-07-14T10:30:00-05:30",
		"D:2019":                  "2019-01-01T00:00:00Z",
		"2019-07-14T10:30:00Z":    "2019-07-14T10:30:00Z",
		"2019-07-14T10:30:00.5":   "2019-07-14T10:30:00Z",
		"2019-07-14":              "2019-07-14T00:00:00Z",
		"garbage":                 "0001-01-01T00:00:00Z",
		"D:99990101":              "0001-01-01T00:00:00Z",
	} {
		if got := parseDate(in).Format(time.RFC3339); got != want {
			t.Errorf("parseDate(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestPDF20Header: a PDF whose header says 2.0 is read like a 1.7 one.
func TestPDF20Header(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(fixtureDir(t), "sample.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	b = append([]byte("%PDF-2.0"), b[8:]...)
	if d := extract(t, write(t, "v2.pdf", b), "pdf"); segmentWith(t, d, "chinchillapdf")["page"] != 3 {
		t.Errorf("segments %v", d.Segments)
	}
}

// TestCheck: Check decides from type, extension and size without opening the file (the path
// does not exist here).
func TestCheck(t *testing.T) {
	t.Parallel()
	m := &Module{Limits: Limits{MaxFileBytes: 1000}}
	for _, tc := range []struct {
		typ, path string
		size      int64
		want      bool
	}{
		{"application/pdf", "/nowhere/a.pdf", 999, true},
		{"application/pdf", "/nowhere/a.pdf", 1001, false}, // over MaxFileBytes
		{"text/plain", "/nowhere/huge.log", 5 << 30, true}, // plain text: a prefix is read
		{"text/plain", "/nowhere/empty.txt", 0, false},
		{"image/jpeg", "/nowhere/p.jpg", 10, false},
		{"application/octet-stream", "/nowhere/blob", 10, false},
	} {
		job := &sdk.Job{Path: tc.path, Document: protocol.Document{Type: tc.typ, Size: tc.size}, Log: zerolog.Nop()}
		if got, err := m.Check(context.Background(), job); got != tc.want || err != nil {
			t.Errorf("Check(%s, %s, %d) = %v, %v; want %v", tc.typ, tc.path, tc.size, got, err, tc.want)
		}
	}
}
