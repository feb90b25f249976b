package ocr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // header readers for the size check
	_ "image/jpeg"
	_ "image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"

	"github.com/homeindex/homeindex/modules/thumbnail"
	"github.com/homeindex/homeindex/sdk"
)

// Version is the output version: Check skips files whose version.json holds it.
const Version = 1

const versionFile = "version.json"

// Timing margins: a result must reach the SDK before the job's deadline.
const (
	resultMargin = 750 * time.Millisecond // kept free at the end of a job for the answer
	minPageTime  = time.Second            // no page starts with less than this left
)

// Module is the OCR module's sdk.Handler.
type Module struct {
	cfg Config
}

// New returns the module; tools left "" in cfg are looked up in PATH (PDFs are declined
// without pdftotext, pdftoppm and pdfinfo).
func New(cfg Config) *Module {
	look := func(p *string, name string) {
		if *p == "" {
			*p, _ = exec.LookPath(name)
		}
	}
	look(&cfg.Tesseract, "tesseract")
	look(&cfg.PDFToText, "pdftotext")
	look(&cfg.PDFToPPM, "pdftoppm")
	look(&cfg.PDFInfo, "pdfinfo")
	if len(cfg.Languages) == 0 {
		cfg.Languages = []string{DefaultLanguage}
	}
	if cfg.MaxPages <= 0 {
		cfg.MaxPages = DefaultMaxPages
	}
	if cfg.DPI <= 0 {
		cfg.DPI = DefaultDPI
	}
	if cfg.MaxPixels <= 0 {
		cfg.MaxPixels = DefaultMaxPixels
	}
	return &Module{cfg: cfg}
}

// Config returns the configuration in use (tools resolved).
func (m *Module) Config() Config { return m.cfg }

func (m *Module) pdfTools() bool {
	return m.cfg.PDFToText != "" && m.cfg.PDFToPPM != "" && m.cfg.PDFInfo != ""
}

// Check runs images and PDFs not read yet by this Version.
func (m *Module) Check(_ context.Context, job *sdk.Job) (bool, error) {
	k, err := thumbnail.SniffFile(job.Path)
	if err != nil {
		return false, thumbnail.FileErr(err)
	}
	if !k.IsImage() && !(k == thumbnail.KindPDF && m.pdfTools()) {
		return false, nil
	}
	return thumbnail.Outdated(job.MetadataDir, Version), nil
}

// Record is the document's "ocr" field.
type Record struct {
	Version        int      `json:"version"`
	Languages      []string `json:"languages"`
	Pages          int      `json:"pages"`                     // pages read by tesseract
	PagesTotal     int      `json:"pages_total"`               // pages in the file
	PagesWithText  int      `json:"pages_with_text,omitempty"` // PDF pages left to the text module
	PageNumbers    []int    `json:"page_numbers,omitempty"`    // the pages read, in order
	Words          int      `json:"words"`
	MeanConfidence float64  `json:"mean_confidence"` // mean word confidence, 0-100
	// Stopped says why pages were left unread: "page cap" (MaxPages), "deadline" (TIMEOUT).
	Stopped       string `json:"stopped,omitempty"`
	PageCap       int    `json:"page_cap,omitempty"`        // MaxPages, when it was reached
	PagesTimedOut []int  `json:"pages_timed_out,omitempty"` // pages over their own timeout
}

// Run reads the file's text and returns it, one segment per page.
func (m *Module) Run(ctx context.Context, job *sdk.Job) (sdk.Result, error) {
	rec, segs, err := m.Read(ctx, job.Path, job.Log.Info().Msgf)
	if err != nil {
		return sdk.Result{}, err
	}
	if err := os.MkdirAll(job.MetadataDir, 0o755); err != nil {
		return sdk.Result{}, err
	}
	v, _ := json.Marshal(map[string]int{"version": Version})
	if err := os.WriteFile(filepath.Join(job.MetadataDir, versionFile), v, 0o644); err != nil {
		return sdk.Result{}, err
	}
	res := sdk.Result{Document: map[string]any{"ocr": rec}}
	if len(segs) > 0 {
		res.Content = segs
	}
	return res, nil
}

// Read OCRs the file at path: an image or a PDF's pages without text. progress gets one line
// per page.
func (m *Module) Read(ctx context.Context, path string, progress func(format string, args ...any)) (Record, sdk.Segments, error) {
	rec := Record{Version: Version, Languages: m.cfg.Languages}
	k, err := thumbnail.SniffFile(path)
	if err != nil {
		return rec, nil, thumbnail.FileErr(err)
	}
	var segs sdk.Segments
	var conf float64
	add := func(page int, pt pageText) {
		rec.Pages++
		rec.PageNumbers = append(rec.PageNumbers, page)
		rec.Words += pt.Words
		conf += pt.ConfSum
		if pt.Text != "" {
			segs = append(segs, sdk.Segment{Text: pt.Text, Fields: map[string]any{"page": page}})
		}
	}
	switch {
	case k.IsImage():
		rec.PagesTotal = 1
		pt, err := m.image(ctx, path)
		if err != nil {
			return rec, nil, err
		}
		add(1, pt)
		progress("page 1/1: %d words, confidence %.1f", pt.Words, mean(pt.ConfSum, pt.Words))
	case k == thumbnail.KindPDF && m.pdfTools():
		if err := m.pdf(ctx, path, &rec, add, progress); err != nil {
			return rec, nil, err
		}
	default:
		return rec, nil, sdk.Permanent(fmt.Errorf("not an image or PDF this module reads (%q)", k))
	}
	rec.MeanConfidence = math.Round(mean(conf, rec.Words)*10) / 10
	return rec, segs, nil
}

func mean(sum float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// image OCRs one image file after checking its header's size.
func (m *Module) image(ctx context.Context, path string) (pageText, error) {
	f, err := os.Open(path)
	if err != nil {
		return pageText{}, thumbnail.FileErr(err)
	}
	defer f.Close()
	cfg, format, err := image.DecodeConfig(f)
	if err != nil {
		return pageText{}, sdk.Permanent(fmt.Errorf("read image header: %w", err))
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > m.cfg.MaxPixels || px <= 0 {
		return pageText{}, sdk.Permanent(fmt.Errorf("%s image %d×%d is over the %d-pixel limit (%s)", format, cfg.Width, cfg.Height, m.cfg.MaxPixels, EnvMaxPixels))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return pageText{}, err
	}
	pctx, cancel, err := m.pageContext(ctx)
	if err != nil {
		return pageText{}, err
	}
	defer cancel()
	pt, err := m.tesseract(pctx, f)
	if err != nil && ctx.Err() == nil && pctx.Err() != nil {
		return pageText{}, sdk.Permanent(fmt.Errorf("the image took over %s (%s)", m.cfg.PageTimeout, EnvPageTimeout))
	}
	return pt, err
}

// pageContext bounds one page: PageTimeout, and the job's deadline less the answer's margin.
// It fails when too little time is left to start a page.
func (m *Module) pageContext(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl) - resultMargin
		if left < minPageTime {
			return nil, nil, errNoTime
		}
		if m.cfg.PageTimeout <= 0 || m.cfg.PageTimeout > left {
			c, cancel := context.WithTimeout(ctx, left)
			return c, cancel, nil
		}
	}
	if m.cfg.PageTimeout > 0 {
		c, cancel := context.WithTimeout(ctx, m.cfg.PageTimeout)
		return c, cancel, nil
	}
	c, cancel := context.WithCancel(ctx)
	return c, cancel, nil
}

var errNoTime = errors.New("too little time left before the job's deadline to read a page")

// tesseract reads an image from in (standard input) and parses its TSV output. One thread: the
// host's cores are shared between workers (see RESOURCE_SHARES).
func (m *Module) tesseract(ctx context.Context, in io.Reader) (pageText, error) {
	cmd := exec.CommandContext(ctx, m.cfg.Tesseract, "-", "stdout", "-l", strings.Join(m.cfg.Languages, "+"), "--psm", "3", "tsv")
	cmd.Stdin = in
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	var out bytes.Buffer
	stderr := &sdk.LimitedBuffer{Max: 4096}
	cmd.Stdout = &out
	cmd.Stderr = stderr
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return pageText{}, ctx.Err()
	case err != nil:
		return pageText{}, sdk.Permanent(fmt.Errorf("tesseract: %w: %s", err, bytes.TrimSpace(stderr.Bytes())))
	}
	return parseTSV(out.String()), nil
}
