package ocr

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/homeindex/homeindex/modules/ocr/ocrtest"
	"github.com/homeindex/homeindex/sdk"
	"github.com/homeindex/homeindex/sdk/moduletest"
)

const sentence = "The quick brown fox jumps over the lazy dog while a quokka watches from the riverbank at dawn."

// recovered is the share of want's words found in got (case and punctuation ignored).
func recovered(want, got string) float64 {
	norm := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })
	}
	have := map[string]int{}
	for _, w := range norm(got) {
		have[w]++
	}
	ws := norm(want)
	n := 0
	for _, w := range ws {
		if have[w] > 0 {
			have[w]--
			n++
		}
	}
	return float64(n) / float64(len(ws))
}

func render(t testing.TB, text string) *image.Gray {
	t.Helper()
	img, err := ocrtest.Render(ocrtest.Page{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func writeImage(t testing.TB, path string, enc func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := enc(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func segments(t testing.TB, s sdk.Segments) map[int]string {
	t.Helper()
	out := map[int]string{}
	for _, seg := range s {
		p, _ := seg.Fields["page"].(int)
		out[p] += seg.Text
	}
	return out
}

// A sentence drawn with a real font is read back (≥ 90% of its words) from PNG, JPEG, TIFF
// and BMP files, as page 1 with a confidence.
func TestImages(t *testing.T) {
	t.Parallel()
	img := render(t, sentence)
	dir := t.TempDir()
	files := map[string]func(*bytes.Buffer) error{
		"scan.png": func(b *bytes.Buffer) error { return png.Encode(b, img) },
		"scan.jpg": func(b *bytes.Buffer) error { return jpeg.Encode(b, img, &jpeg.Options{Quality: 75}) },
		"scan.tif": func(b *bytes.Buffer) error { return tiff.Encode(b, img, &tiff.Options{Compression: tiff.Deflate}) },
		"scan.bmp": func(b *bytes.Buffer) error { return bmp.Encode(b, img) },
	}
	m := New(Config{})
	for name, enc := range files {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := writeImage(t, filepath.Join(dir, name), enc)
			var progress []string
			rec, segs, err := m.Read(context.Background(), p, func(f string, a ...any) { progress = append(progress, f) })
			if err != nil {
				t.Fatal(err)
			}
			got := segments(t, segs)[1]
			if r := recovered(sentence, got); r < 0.9 {
				t.Errorf("recovered %.0f%% of the words: %q", 100*r, got)
			}
			if rec.Pages != 1 || rec.PagesTotal != 1 || rec.Words < 15 || rec.MeanConfidence < 60 || rec.Languages[0] != "eng" || len(progress) != 1 {
				t.Errorf("record %+v, progress %q", rec, progress)
			}
		})
	}
}

// A PDF made of scanned pages (img2pdf) is read page by page; in a PDF mixing a page with a
// text layer (ghostscript) and a scanned page (pdfunite), only the scanned page is read.
func TestPDF(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	texts := []string{sentence, "Second page: seven purple penguins juggle bright oranges near the harbour."}
	var pngs []string
	for i, s := range texts {
		img := render(t, s)
		pngs = append(pngs, writeImage(t, filepath.Join(dir, string(rune('a'+i))+".png"), func(b *bytes.Buffer) error { return png.Encode(b, img) }))
	}
	scan := filepath.Join(dir, "scan.pdf")
	run(t, "img2pdf", append([]string{"--pagesize", "A4", "-o", scan}, pngs...)...)
	ps := filepath.Join(dir, "text.ps")
	if err := os.WriteFile(ps, []byte("%!PS\n/Helvetica findfont 14 scalefont setfont\n72 720 moveto (This page has a text layer about zebras.) show\nshowpage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	textPDF := filepath.Join(dir, "text.pdf")
	run(t, "gs", "-q", "-dBATCH", "-dNOPAUSE", "-dSAFER", "-sDEVICE=pdfwrite", "-sOutputFile="+textPDF, ps)
	mixed := filepath.Join(dir, "mixed.pdf")
	run(t, "pdfunite", textPDF, scan, mixed)

	m := New(Config{})
	var progress []string
	rec, segs, err := m.Read(context.Background(), scan, func(f string, a ...any) { progress = append(progress, f) })
	if err != nil {
		t.Fatal(err)
	}
	pages := segments(t, segs)
	for i, s := range texts {
		if r := recovered(s, pages[i+1]); r < 0.9 {
			t.Errorf("page %d: recovered %.0f%%: %q", i+1, 100*r, pages[i+1])
		}
	}
	if rec.Pages != 2 || rec.PagesTotal != 2 || rec.PagesWithText != 0 || len(progress) != 3 {
		t.Errorf("scan record %+v, progress %q", rec, progress)
	}
	rec, segs, err = m.Read(context.Background(), mixed, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	pages = segments(t, segs)
	if rec.Pages != 2 || rec.PagesTotal != 3 || rec.PagesWithText != 1 || pages[1] != "" || recovered(texts[1], pages[3]) < 0.9 {
		t.Errorf("mixed record %+v, pages %v", rec, pages)
	}
	if len(rec.PageNumbers) != 2 || rec.PageNumbers[0] != 2 || rec.PageNumbers[1] != 3 {
		t.Errorf("pages read %v, want [2 3]", rec.PageNumbers)
	}
}

// OCR_MAX_PAGES stops a long scan and says so; a job without time left stops before a page;
// a page over OCR_PAGE_TIMEOUT is recorded and the next one is tried.
func TestLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var pngs []string
	for i, s := range []string{"alpha page one", "bravo page two", "charlie page three"} {
		img := render(t, s)
		pngs = append(pngs, writeImage(t, filepath.Join(dir, string(rune('a'+i))+".png"), func(b *bytes.Buffer) error { return png.Encode(b, img) }))
	}
	pdf := filepath.Join(dir, "three.pdf")
	run(t, "img2pdf", append([]string{"-o", pdf}, pngs...)...)

	var progress []string
	rec, segs, err := New(Config{MaxPages: 2}).Read(context.Background(), pdf, func(f string, a ...any) { progress = append(progress, f) })
	if err != nil || rec.Pages != 2 || rec.Stopped != "page cap" || rec.PageCap != 2 || len(segs) != 2 {
		t.Errorf("capped: %+v, %d segments, %v", rec, len(segs), err)
	}
	if !strings.Contains(strings.Join(progress, "\n"), "page cap reached") {
		t.Errorf("progress %q does not report the cap", progress)
	}

	ctx, cancel := context.WithTimeout(context.Background(), resultMargin+minPageTime/2)
	defer cancel()
	rec, _, err = New(Config{}).Read(ctx, pdf, func(string, ...any) {})
	if err != nil || rec.Pages != 0 || rec.Stopped != "deadline" || ctx.Err() != nil {
		t.Errorf("no time: %+v, %v, ctx %v", rec, err, ctx.Err())
	}

	rec, _, err = New(Config{PageTimeout: time.Millisecond}).Read(context.Background(), pdf, func(string, ...any) {})
	if err != nil || rec.Pages != 0 || len(rec.PagesTimedOut) != 3 {
		t.Errorf("page timeouts: %+v, %v", rec, err)
	}
}

// Only recognised image formats reach tesseract, which would read any other input as a list
// of file names: a text file naming a scan is declined and refused, not read.
func TestOnlyImagesReachTesseract(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	img := render(t, sentence)
	scan := writeImage(t, filepath.Join(dir, "scan.png"), func(b *bytes.Buffer) error { return png.Encode(b, img) })
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte(scan+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(dir, "fake.png")
	if err := os.WriteFile(fake, append([]byte("\x89PNG\r\n\x1a\n"), []byte(scan+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	m := New(Config{})
	if ok, err := m.Check(context.Background(), &sdk.Job{Path: list, MetadataDir: dir}); ok || err != nil {
		t.Errorf("Check of a list of names = %v, %v; want false", ok, err)
	}
	for _, p := range []string{list, fake} {
		rec, segs, err := m.Read(context.Background(), p, func(string, ...any) {})
		if !sdk.IsPermanent(err) || len(segs) != 0 || rec.Words != 0 {
			t.Errorf("%s: %+v, %d segments, %v; want a permanent refusal", filepath.Base(p), rec, len(segs), err)
		}
	}
	big := writeImage(t, filepath.Join(dir, "big.png"), func(b *bytes.Buffer) error { return png.Encode(b, image.NewGray(image.Rect(0, 0, 3000, 3000))) })
	if _, _, err := New(Config{MaxPixels: 1_000_000}).Read(context.Background(), big, func(string, ...any) {}); !sdk.IsPermanent(err) || !strings.Contains(err.Error(), EnvMaxPixels) {
		t.Errorf("image over the pixel cap: %v", err)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	c, err := LoadConfig(env())
	if err != nil || c.Languages[0] != "eng" || c.MaxPages != DefaultMaxPages || c.DPI != DefaultDPI {
		t.Errorf("defaults %+v, %v", c, err)
	}
	c, err = LoadConfig(env(EnvLanguages, "eng+chi_sim", EnvMaxPages, "5", EnvPageTimeout, "2.5"))
	if err != nil || strings.Join(c.Languages, ",") != "eng,chi_sim" || c.MaxPages != 5 || c.PageTimeout != 2500*time.Millisecond {
		t.Errorf("set %+v, %v", c, err)
	}
	if _, err := LoadConfig(env(EnvLanguages, "eng;rm", EnvMaxPages, "0", EnvDPI, "x")); err == nil ||
		!strings.Contains(err.Error(), EnvLanguages) || !strings.Contains(err.Error(), EnvMaxPages) || !strings.Contains(err.Error(), EnvDPI) {
		t.Errorf("invalid values: %v", err)
	}
	if err := CheckLanguages(context.Background(), "tesseract", []string{"eng"}); err != nil {
		t.Errorf("eng: %v", err)
	}
	if err := CheckLanguages(context.Background(), "tesseract", []string{"eng", "chi_sim"}); err == nil || !strings.Contains(err.Error(), "tesseract-ocr-chi-sim") {
		t.Errorf("missing chi_sim: %v", err)
	}
}

// Through the SDK and a real redis-server: content is one segment per page carrying "page",
// the document gets "ocr", and log.txt has the page's progress line.
func TestThroughSDK(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := png.Encode(&b, render(t, sentence)); err != nil {
		t.Fatal(err)
	}
	out := moduletest.Run(t, New(Config{}), moduletest.File("scans/receipt.png", b.String()), moduletest.File("a.txt", "plain text"),
		moduletest.Configure(func(c *sdk.Config) { c.Timeout = 60 * time.Second }))
	o := out[0]
	var segs []map[string]any
	if err := json.Unmarshal(o.Content, &segs); err != nil || len(segs) != 1 || segs[0]["page"] != 1.0 {
		t.Fatalf("content %s: %v", o.Content, err)
	}
	if r := recovered(sentence, segs[0]["text"].(string)); r < 0.9 {
		t.Errorf("recovered %.0f%%", 100*r)
	}
	var rec Record
	if err := json.Unmarshal(o.Fields["ocr"], &rec); err != nil || rec.Pages != 1 || rec.Words < 15 {
		t.Errorf("ocr field %s: %v", o.Fields["ocr"], err)
	}
	if !strings.Contains(string(o.Files[sdk.LogFileName]), "page 1/1") {
		t.Errorf("log.txt:\n%s", o.Files[sdk.LogFileName])
	}
	if !out[1].Skipped {
		t.Errorf("text file %+v, want skipped", out[1])
	}
}
