package ocr

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/rssprobe"
	"github.com/homeindex/homeindex/modules/ocr/ocrtest"
)

// childEnv makes the test binary an OCR reader over the files named in it (see TestMain): the
// benchmark measures the module's own peak RSS (tesseract runs beside it) in a process of its
// own.
const childEnv = "OCR_BENCH_CHILD"

func TestMain(m *testing.M) {
	rssprobe.Serve(childEnv, func(files []string) error {
		mod := New(Config{})
		for _, f := range files {
			if _, _, err := mod.Read(context.Background(), f, func(string, ...any) {}); err != nil {
				return err
			}
		}
		return nil
	})
	os.Exit(m.Run())
}

const benchText = `Minutes of the allotment society, spring meeting. The treasurer reported that the water
bill had risen by eleven percent and proposed a new rota for the shared hose. Members agreed to
repair the greenhouse roof before the first frost and to order forty bags of compost from the
cooperative. The secretary read a letter from the council about the footpath and the broken gate
near plot seventeen. A quokka-shaped scarecrow was admired by all. Any other business: the summer
show will be held on the second Saturday of July, with prizes for the longest runner bean, the
heaviest marrow and the best jar of chutney. The meeting closed at nine in the evening.`

// BenchmarkOCRPages: pages per second over full A4 pages at 200 DPI, the module (header check,
// tesseract TSV, parsing) against the bare `tesseract page.png stdout tsv` command on the same
// pages in the same run (one thread each, alternating, so the machine's load hits both), and
// the module process's peak RSS.
func BenchmarkOCRPages(b *testing.B) {
	const n = 3
	dir := b.TempDir()
	var files []string
	for i := 0; i < n; i++ {
		img, err := ocrtest.Render(ocrtest.Page{Text: strings.Repeat(benchText+"\n", 2), Height: 2339})
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			b.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("page%d.png", i))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
		files = append(files, p)
	}
	m := New(Config{})
	var mod, bare time.Duration
	b.ResetTimer()
	for range b.N {
		for _, f := range files {
			start := time.Now()
			cmd := exec.Command("tesseract", f, "stdout", "-l", "eng", "--psm", "3", "tsv")
			cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
			if o, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("tesseract: %v\n%s", err, o)
			}
			bare += time.Since(start)
			start = time.Now()
			if _, _, err := m.Read(context.Background(), f, func(string, ...any) {}); err != nil {
				b.Fatal(err)
			}
			mod += time.Since(start)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(n*b.N)/mod.Seconds(), "module-pages/s")
	b.ReportMetric(float64(n*b.N)/bare.Seconds(), "bare-pages/s")
	b.ReportMetric(100*(mod.Seconds()/bare.Seconds()-1), "overhead-%")
	b.ReportMetric(float64(rssprobe.PeakKB(b, childEnv, files))/1024, "peak-RSS-MB")
}
