package text

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fixtures come from real producers at test time (make deps installs them): Chromium prints
// PDFs, python3-docx writes DOCX, python3-openpyxl XLSX, python3-odf ODT/ODS/ODP, qpdf encrypts.
// PPTX, EPUB and RTF are written here in Go, as small as their formats allow.

const (
	chromiumBin = "/usr/bin/chromium"
	pythonBin   = "/usr/bin/python3" // Debian's, where python3-docx & co. are installed
)

// need fails the test when a producer is missing: tests never skip.
func need(t testing.TB, bin string) {
	t.Helper()
	if _, err := exec.LookPath(bin); err != nil {
		t.Fatalf("%s is needed to make this test's fixtures: run `make deps` (scripts/install-text-tools.sh, scripts/install-chromium.sh): %v", bin, err)
	}
}

// printPDF prints the HTML page to a PDF with headless Chromium (the flags of the page tests).
func printPDF(t testing.TB, dir, name, page string) string {
	t.Helper()
	need(t, chromiumBin)
	src := filepath.Join(dir, name+".html")
	out := filepath.Join(dir, name+".pdf")
	if err := os.WriteFile(src, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromiumBin, "--headless=new", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--no-default-browser-check", "--user-data-dir="+filepath.Join(dir, name+"-profile"),
		"--no-pdf-header-footer", "--print-to-pdf="+out, "file://"+src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --print-to-pdf: %v\n%s", err, b)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Fatalf("chromium wrote no PDF: %v", err)
	}
	return out
}

// python runs a script with Debian's python3 (argv[1] is dir).
func python(t testing.TB, dir, script string) {
	t.Helper()
	need(t, pythonBin)
	cmd := exec.Command(pythonBin, "-c", script, dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python3: %v\n%s", err, b)
	}
}

// fixtures are made once per test binary and shared (read-only) by the tests.
var fixtures struct {
	once sync.Once
	dir  string
	err  error
}

// samplePage is a 3-page HTML document: each page holds a word found nowhere else.
const samplePage = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Quarterly Zebra Report</title><meta name="author" content="Ada Lovelace">
<style>body{font-family:sans-serif} .pb{page-break-before:always}</style>
<script>document.write("scriptonlyword")</script></head><body>
<h1>Quarterly report</h1>
<p>The first page mentions the aardvarkpdf and the quick brown fox, café and naïve.</p>
<p class="pb">The second page is about the bumblebeepdf and the lazy dog.</p>
<p class="pb">The third page closes with the chinchillapdf, 42 figures and “quotes”.</p>
</body></html>`

// docxScript writes sample.docx with python3-docx.
const docxScript = `
import sys, datetime, docx
d = docx.Document()
p = d.core_properties
p.title = "Docx Sample"; p.author = "Grace Hopper"; p.language = "en-GB"
p.created = datetime.datetime(2019, 7, 14, 10, 30, 0); p.modified = datetime.datetime(2020, 1, 2, 3, 4, 5)
d.add_heading("A heading in Word", 0)
d.add_paragraph("The docxonlyword lives in this document, with the words of a quiet paragraph.")
t = d.add_table(rows=1, cols=2); t.cell(0, 0).text = "tablecellword"; t.cell(0, 1).text = "second cell"
d.save(sys.argv[1] + "/sample.docx")
`

// officeScript writes sample.xlsx (openpyxl), sample.odt, sample.ods and sample.odp (odfpy).
const officeScript = `
import sys, openpyxl
from odf.opendocument import OpenDocumentText, OpenDocumentSpreadsheet, OpenDocumentPresentation
from odf.text import P, H
from odf.table import Table, TableRow, TableCell
from odf.draw import Page, Frame, TextBox
from odf.style import MasterPage, PageLayout
from odf import dc, meta
out = sys.argv[1]
wb = openpyxl.Workbook(); ws = wb.active; ws.title = "Budget"
ws.append(["item", "cost"]); ws.append(["xlsxonlyword", 12.5]); ws.append(["total", "=SUM(B2:B2)"])
ws2 = wb.create_sheet("Notes"); ws2["A1"] = "secondsheetword"
wb.properties.title = "Workbook Sample"; wb.properties.creator = "Alan Turing"
wb.save(out + "/sample.xlsx")
o = OpenDocumentText()
o.meta.addElement(dc.Title(text="ODT Sample")); o.meta.addElement(meta.InitialCreator(text="Emmy Noether"))
o.meta.addElement(meta.CreationDate(text="2018-05-06T07:08:09"))
o.text.addElement(H(outlinelevel=1, text="An ODT heading")); o.text.addElement(P(text="The odtonlyword is in this paragraph."))
o.save(out + "/sample.odt")
s = OpenDocumentSpreadsheet()
for name, word in (("First", "odsfirstword"), ("Second", "odssecondword")):
    t = Table(name=name); r = TableRow(); c = TableCell(); c.addElement(P(text=word)); r.addElement(c); t.addElement(r)
    s.spreadsheet.addElement(t)
s.save(out + "/sample.ods")
p = OpenDocumentPresentation()
pl = PageLayout(name="pl"); p.automaticstyles.addElement(pl)
mp = MasterPage(name="mp", pagelayoutname=pl); p.masterstyles.addElement(mp)
for word in ("odpslideone", "odpslidetwo"):
    pg = Page(masterpagename=mp); f = Frame(width="10cm", height="2cm", x="1cm", y="1cm"); tb = TextBox()
    tb.addElement(P(text=word)); f.addElement(tb); pg.addElement(f); p.presentation.addElement(pg)
p.save(out + "/sample.odp")
`

// fixtureDir makes every shared fixture once: the Chromium PDF (and an encrypted copy by
// qpdf), the Python-written office files, and the Go-written PPTX, EPUB and RTF.
func fixtureDir(t testing.TB) string {
	t.Helper()
	fixtures.once.Do(func() {
		dir, err := os.MkdirTemp("", "text-fixtures-")
		if err != nil {
			fixtures.err = err
			return
		}
		fixtures.dir = dir
		ft := &fatalRecorder{TB: t}
		func() {
			defer func() { _ = recover() }()
			printPDF(ft, dir, "sample", samplePage)
			need(ft, "qpdf")
			if b, err := exec.Command("qpdf", "--encrypt", "secret", "owner", "128", "--use-aes=y", "--", dir+"/sample.pdf", dir+"/encrypted.pdf").CombinedOutput(); err != nil {
				ft.Fatalf("qpdf --encrypt: %v\n%s", err, b)
			}
			if b, err := exec.Command("qpdf", "--encrypt", "", "owner", "128", "--use-aes=y", "--", dir+"/sample.pdf", dir+"/owner-only.pdf").CombinedOutput(); err != nil {
				ft.Fatalf("qpdf --encrypt: %v\n%s", err, b)
			}
			python(ft, dir, docxScript)
			python(ft, dir, officeScript)
			writeZip(ft, dir+"/sample.pptx", pptxParts())
			writeZip(ft, dir+"/sample.epub", epubParts())
			if err := os.WriteFile(dir+"/sample.rtf", []byte(sampleRTF), 0o644); err != nil {
				ft.Fatalf("%v", err)
			}
		}()
		fixtures.err = ft.err
	})
	if fixtures.err != nil {
		t.Fatalf("fixtures: %v", fixtures.err)
	}
	return fixtures.dir
}

// fatalRecorder turns Fatalf into a recorded error and a panic, so a shared fixture's failure
// is reported by every test that needs it.
type fatalRecorder struct {
	testing.TB
	err error
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.err = fmt.Errorf(format, args...)
	panic(f.err)
}

func (f *fatalRecorder) Helper() {}

// zipPart is one entry of a zip written by writeZip; stored entries are not compressed.
type zipPart struct {
	name, body string
	stored     bool
}

func writeZip(t testing.TB, path string, parts []zipPart) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		m := zip.Deflate
		if p.stored {
			m = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: p.name, Method: m})
		if err != nil {
			t.Fatalf("%v", err)
		}
		if _, err := w.Write([]byte(p.body)); err != nil {
			t.Fatalf("%v", err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatalf("%v", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatalf("%v", err)
	}
}

func pptxParts() []zipPart {
	slide := func(word string) string {
		return `<?xml version="1.0" encoding="UTF-8"?><p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>Slide about</a:t></a:r><a:r><a:t> ` + word + `</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>`
	}
	return []zipPart{
		{name: "[Content_Types].xml", body: `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`},
		{name: "ppt/presentation.xml", body: `<?xml version="1.0"?><p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"/>`},
		{name: "ppt/slides/slide1.xml", body: slide("pptxslideone")},
		{name: "ppt/slides/slide2.xml", body: slide("pptxslidetwo")},
		{name: "ppt/slides/slide10.xml", body: slide("pptxslideten")},
		{name: "docProps/core.xml", body: `<?xml version="1.0"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/"><dc:title>Deck Sample</dc:title><dc:creator>Ada</dc:creator><dcterms:created>2021-03-04T05:06:07Z</dcterms:created></cp:coreProperties>`},
	}
}

func epubParts() []zipPart {
	chapter := func(title, body string) string {
		return `<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>` + title + `</title><style>p{color:red}</style></head><body><h1>` + title + `</h1><p>` + body + `</p></body></html>`
	}
	return []zipPart{
		{name: "mimetype", body: "application/epub+zip", stored: true},
		{name: "META-INF/container.xml", body: `<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`},
		{name: "OEBPS/content.opf", body: `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Epub Sample</dc:title><dc:creator>Mary Shelley</dc:creator><dc:language>en</dc:language><dc:date>1818-01-01</dc:date><meta property="dcterms:modified">2020-02-03T04:05:06Z</meta></metadata><manifest><item id="c1" href="text/ch%201.xhtml" media-type="application/xhtml+xml"/><item id="c2" href="text/ch2.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>`},
		{name: "OEBPS/text/ch 1.xhtml", body: chapter("Letter One", "The epubchapterone word opens the book.")},
		{name: "OEBPS/text/ch2.xhtml", body: chapter("Chapter Two", "The epubchaptertwo word follows.")},
	}
}

const sampleRTF = `{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Times New Roman;}}{\colortbl;\red0\green0\blue0;}
{\info{\title RTF Sample}{\author Ada Lovelace}{\creatim\yr2017\mo3\dy4\hr5\min6}}
{\*\generator Hand;}\f0 The rtfonlyword is here.\par
Caf\'e9 and na\u239?ve and \u-3913?\par
{\pict\pngblip 89504e47}Bold {\b text} ends.\par}`

// sparseFile makes a file of size bytes that holds text at its start and holes after.
func sparseFile(t testing.TB, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Repeat("line of a very large log file with hugefileword\n", 1000)); err != nil {
		t.Fatal(err)
	}
	// The holes read as NUL bytes, past the sniffed prefix: the text reader stops at its limit.
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

func (f *fatalRecorder) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }
