package text

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
)

// make bench (scripts/bench.sh) runs these with -benchtime 1x.

// longPage is an HTML document of about 20 printed pages of varied prose.
func longPage() string {
	words := strings.Fields(`river stone lantern harvest meadow copper violet thunder orchard
		whisper glacier saffron timber harbor falcon ember quarry lagoon prairie cedar mosaic
		voyage anchor beacon canyon delta fjord grove isle jungle kestrel lichen marsh nebula`)
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Benchmark Book</title></head><body>`)
	for p := 0; p < 120; p++ {
		fmt.Fprintf(&b, "<h2>Section %d</h2><p>", p+1)
		for i := 0; i < 90; i++ {
			w := words[(p*31+i*7+i*i)%len(words)]
			if i%13 == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			fmt.Fprintf(&b, "%s%d ", w, (p*i)%97)
			if i%15 == 14 {
				b.WriteString("and the ")
			}
		}
		b.WriteString("</p>")
	}
	b.WriteString("</body></html>")
	return b.String()
}

// BenchmarkPDFAgainstPdftotext: pages/s of Extract and of poppler's pdftotext on the same
// Chromium PDFs in the same run, and how many words the two texts share.
func BenchmarkPDFAgainstPdftotext(b *testing.B) {
	need(b, "pdftotext")
	dir := b.TempDir()
	pdfs := []string{printPDF(b, dir, "book", longPage()), filepath.Join(fixtureDir(b), "sample.pdf")}
	var pages int
	var ours, ref time.Duration
	var agreeSum, agreeN float64
	for b.Loop() {
		pages = 0
		ours, ref = 0, 0
		for _, p := range pdfs {
			start := time.Now()
			d, err := Extract(context.Background(), p, "pdf", Limits{})
			if err != nil {
				b.Fatal(err)
			}
			ours += time.Since(start)
			pages += d.Pages
			start = time.Now()
			out, err := exec.Command("pdftotext", "-q", "-enc", "UTF-8", p, "-").Output()
			if err != nil {
				b.Fatal(err)
			}
			ref += time.Since(start)
			agreeSum += agreement(allText(d), string(out))
			agreeN++
		}
	}
	oursRate := float64(pages) / ours.Seconds()
	refRate := float64(pages) / ref.Seconds()
	agree := agreeSum / agreeN
	b.ReportMetric(oursRate, "pages/s")
	b.ReportMetric(refRate, "pdftotext-pages/s")
	b.ReportMetric(oursRate/refRate, "ratio")
	b.ReportMetric(agree, "word-agreement")
	b.Logf("%d pages: text module %.1f pages/s, pdftotext %.1f pages/s (ratio %.2f, goal ≥ 0.5); word agreement %.3f (goal ≥ 0.95)",
		pages, oursRate, refRate, oursRate/refRate, agree)
	if agree < 0.95 {
		b.Errorf("word agreement %.3f < 0.95", agree)
	}
}

// agreement is the share of words the two texts have in common: the size of the multiset
// intersection over the larger multiset.
func agreement(a, b string) float64 {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			m[w]++
		}
		return m
	}
	ca, cb := count(a), count(b)
	na, nb, common := 0, 0, 0
	for w, n := range ca {
		na += n
		common += min(n, cb[w])
	}
	for _, n := range cb {
		nb += n
	}
	if max(na, nb) == 0 {
		return 1
	}
	return float64(common) / float64(max(na, nb))
}

// BenchmarkTextMixedCorpus: files/s and MB/s of Extract over a corpus of every format family
// (about 200 files: producer-made PDFs and office files, Go-made text formats).
func BenchmarkTextMixedCorpus(b *testing.B) {
	src := fixtureDir(b)
	dir := b.TempDir()
	type file struct{ path, format string }
	var files []file
	add := func(name, format string, body []byte) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			b.Fatal(err)
		}
		files = append(files, file{p, format})
	}
	prose := strings.Repeat("The corpus holds ordinary prose about rivers, harbors and orchards. ", 60)
	for i := 0; i < 30; i++ {
		add(fmt.Sprintf("t%d.txt", i), "plain", []byte(fmt.Sprintf("note %d\n%s\n", i, prose)))
		add(fmt.Sprintf("m%d.md", i), "markdown", []byte(fmt.Sprintf("# Note %d\n\n%s\n", i, prose)))
		add(fmt.Sprintf("h%d.html", i), "html", []byte(fmt.Sprintf("<html><head><title>%d</title><style>p{}</style></head><body><p>%s</p></body></html>", i, prose)))
		add(fmt.Sprintf("j%d.json", i), "json", []byte(fmt.Sprintf(`{"id":%d,"items":[{"text":%q}]}`, i, prose)))
		add(fmt.Sprintf("c%d.csv", i), "csv", []byte(strings.Repeat(fmt.Sprintf("%d,river,\"harbor, orchard\",12.5\n", i), 100)))
		add(fmt.Sprintf("g%d.go", i), "code", []byte(fmt.Sprintf("package p\n\n// F%d says %s\nfunc F%d() {}\n", i, prose[:200], i)))
	}
	for i := 0; i < 5; i++ {
		for _, f := range []struct{ name, format string }{{"sample.pdf", "pdf"}, {"sample.docx", "docx"}, {"sample.xlsx", "xlsx"},
			{"sample.odt", "odt"}, {"sample.ods", "ods"}, {"sample.odp", "odp"}, {"sample.pptx", "pptx"}, {"sample.epub", "epub"}, {"sample.rtf", "rtf"}} {
			body, err := os.ReadFile(filepath.Join(src, f.name))
			if err != nil {
				b.Fatal(err)
			}
			add(fmt.Sprintf("%d-%s", i, f.name), f.format, body)
		}
	}
	var bytes int64
	for _, f := range files {
		st, _ := os.Stat(f.path)
		bytes += st.Size()
	}
	var took time.Duration
	for b.Loop() {
		start := time.Now()
		for _, f := range files {
			if _, err := Extract(context.Background(), f.path, f.format, Limits{}); err != nil {
				b.Fatalf("%s: %v", f.path, err)
			}
		}
		took = time.Since(start)
	}
	b.ReportMetric(float64(len(files))/took.Seconds(), "files/s")
	b.ReportMetric(float64(bytes)/1e6/took.Seconds(), "MB/s")
	b.Logf("%d files, %.1f MB: %.0f files/s, %.1f MB/s", len(files), float64(bytes)/1e6, float64(len(files))/took.Seconds(), float64(bytes)/1e6/took.Seconds())
}
