package ocr

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/homeindex/homeindex/sdk"
)

// maxTextLayer bounds what pdftotext may print for one file.
const maxTextLayer = 64 << 20

// pdf OCRs the pages of a PDF that have no text layer, in order, until MaxPages pages are
// read or too little time is left; add receives each page read.
func (m *Module) pdf(ctx context.Context, path string, rec *Record, add func(int, pageText), progress func(string, ...any)) error {
	// The whole-file steps stop where pages would: before the answer's margin.
	if dl, ok := ctx.Deadline(); ok {
		if time.Until(dl) < resultMargin+minPageTime {
			rec.Stopped = "deadline"
			progress("stopping before the first page: too little time left before TIMEOUT")
			return nil
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-resultMargin))
		defer cancel()
	}
	sizes, total, err := m.pageSizes(ctx, path)
	if err != nil {
		return err
	}
	rec.PagesTotal = total
	layer, err := m.run(ctx, maxTextLayer, m.cfg.PDFToText, "-enc", "UTF-8", "-f", "1", "-l", strconv.Itoa(total), path, "-")
	if err != nil {
		return fmt.Errorf("pdftotext: %w", err)
	}
	texts := strings.Split(string(layer), "\f")
	var todo []int
	for p := 1; p <= total; p++ {
		if p <= len(texts) && strings.IndexFunc(texts[p-1], func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			rec.PagesWithText++
			continue
		}
		todo = append(todo, p)
	}
	progress("%d pages: %d with a text layer (left to the text module), %d to read", total, rec.PagesWithText, len(todo))
	if len(todo) == 0 {
		return nil
	}
	tmp, err := os.MkdirTemp("", "ocr-pdf-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for i, p := range todo {
		if rec.Pages >= m.cfg.MaxPages {
			rec.Stopped, rec.PageCap = "page cap", m.cfg.MaxPages
			progress("page cap reached (%s=%d): %d pages left unread", EnvMaxPages, m.cfg.MaxPages, len(todo)-i)
			return nil
		}
		pctx, cancel, err := m.pageContext(ctx)
		if errors.Is(err, errNoTime) {
			rec.Stopped = "deadline"
			progress("stopping before page %d: too little time left before TIMEOUT; %d pages left unread", p, len(todo)-i)
			return nil
		}
		start := time.Now()
		pt, err := m.pdfPage(pctx, path, p, sizes[p], tmp)
		pageOver := pctx.Err() != nil
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case pageOver:
			rec.PagesTimedOut = append(rec.PagesTimedOut, p)
			progress("page %d/%d: timed out after %s", p, total, time.Since(start).Round(time.Millisecond))
			continue
		case err != nil:
			return err
		}
		add(p, pt)
		progress("page %d/%d: %d words, confidence %.1f, %s", p, total, pt.Words, mean(pt.ConfSum, pt.Words), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// pdfPage draws one page with pdftoppm (greyscale PNG) and OCRs it. The resolution is lowered
// for a page so large that DPI would exceed MaxPixels.
func (m *Module) pdfPage(ctx context.Context, path string, page int, size [2]float64, tmp string) (pageText, error) {
	dpi := float64(m.cfg.DPI)
	if w, h := size[0]/72*dpi, size[1]/72*dpi; w*h > float64(m.cfg.MaxPixels) {
		dpi *= math.Sqrt(float64(m.cfg.MaxPixels) / (w * h))
	}
	out := filepath.Join(tmp, "page")
	if _, err := m.run(ctx, 4096, m.cfg.PDFToPPM, "-f", strconv.Itoa(page), "-l", strconv.Itoa(page), "-r",
		strconv.FormatFloat(math.Max(dpi, 1), 'f', 2, 64), "-gray", "-png", "-singlefile", path, out); err != nil {
		return pageText{}, fmt.Errorf("pdftoppm page %d: %w", page, err)
	}
	f, err := os.Open(out + ".png")
	if err != nil {
		return pageText{}, sdk.Permanent(fmt.Errorf("pdftoppm drew nothing for page %d: %w", page, err))
	}
	defer f.Close()
	return m.tesseract(ctx, bufio.NewReader(f))
}

var pageSizeRE = regexp.MustCompile(`(?m)^Page\s+(\d+) size:\s+([\d.]+) x ([\d.]+) pts`)

// pageSizes returns a PDF's page count and each page's size in points (pdfinfo).
func (m *Module) pageSizes(ctx context.Context, path string) (map[int][2]float64, int, error) {
	out, err := m.run(ctx, 16<<20, m.cfg.PDFInfo, "-f", "1", "-l", "1000000", path)
	if err != nil {
		return nil, 0, fmt.Errorf("pdfinfo: %w", err)
	}
	var total int
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "Pages:"); ok {
			total, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if total <= 0 {
		return nil, 0, sdk.Permanent(errors.New("pdfinfo found no pages"))
	}
	sizes := map[int][2]float64{}
	for _, mm := range pageSizeRE.FindAllStringSubmatch(string(out), -1) {
		p, _ := strconv.Atoi(mm[1])
		w, _ := strconv.ParseFloat(mm[2], 64)
		h, _ := strconv.ParseFloat(mm[3], 64)
		sizes[p] = [2]float64{w, h}
	}
	return sizes, total, nil
}

// run runs a poppler tool and returns its standard output (at most limit bytes: more is an
// error). A failure of the tool is permanent (the file is unreadable or encrypted); running
// out of time is not.
func (m *Module) run(ctx context.Context, limit int, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	out := &sdk.LimitedBuffer{Max: limit + 1}
	stderr := &sdk.LimitedBuffer{Max: 4096}
	cmd.Stdout = out
	cmd.Stderr = stderr
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, sdk.Permanent(fmt.Errorf("%w: %s", err, bytes.TrimSpace(stderr.Bytes())))
	case out.Len() > limit:
		return nil, sdk.Permanent(fmt.Errorf("output over %d bytes", limit))
	}
	return out.Bytes(), nil
}
