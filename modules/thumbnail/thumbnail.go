package thumbnail

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/homeindex/homeindex/sdk"
)

// Version is the output version: Check skips files whose version.json holds it.
const Version = 1

// Output file names in the module's metadata directory.
const (
	SmallFile   = "small.jpg"
	PreviewFile = "preview.jpg"
	versionFile = "version.json"
)

// Defaults of Config.
const (
	DefaultSmallSize       = 256
	DefaultPreviewSize     = 1280
	DefaultQuality         = 82
	DefaultMaxPixels       = 100_000_000
	DefaultMaxDecodedBytes = 512 << 20
)

// Config configures the module. Zero fields take the defaults.
type Config struct {
	SmallSize, PreviewSize int // long side in pixels
	Quality                int // JPEG quality
	Limits                 Limits
	// PDFToPPM and FFmpeg are the external tools' paths; "" looks them up in PATH, "-" means
	// absent (their files are declined).
	PDFToPPM, FFmpeg, FFprobe string
}

// Module is the thumbnail module's sdk.Handler.
type Module struct {
	cfg      Config
	declined sync.Map // Kind → struct{}: declined kinds already logged once
}

// New returns the module, looking up pdftoppm, ffmpeg and ffprobe in PATH unless given.
func New(cfg Config) *Module {
	if cfg.SmallSize <= 0 {
		cfg.SmallSize = DefaultSmallSize
	}
	if cfg.PreviewSize <= 0 {
		cfg.PreviewSize = DefaultPreviewSize
	}
	if cfg.Quality <= 0 || cfg.Quality > 100 {
		cfg.Quality = DefaultQuality
	}
	if cfg.Limits.MaxPixels <= 0 {
		cfg.Limits.MaxPixels = DefaultMaxPixels
	}
	if cfg.Limits.MaxDecodedBytes <= 0 {
		cfg.Limits.MaxDecodedBytes = DefaultMaxDecodedBytes
	}
	cfg.PDFToPPM = lookTool(cfg.PDFToPPM, "pdftoppm")
	cfg.FFmpeg = lookTool(cfg.FFmpeg, "ffmpeg")
	cfg.FFprobe = lookTool(cfg.FFprobe, "ffprobe")
	return &Module{cfg: cfg}
}

func lookTool(given, name string) string {
	switch given {
	case "-":
		return ""
	case "":
		p, err := exec.LookPath(name)
		if err != nil {
			return ""
		}
		return p
	}
	return given
}

// Tools reports which external tools were found: kinds they serve are declined without them.
func (m *Module) Tools() map[string]string {
	return map[string]string{"pdftoppm": m.cfg.PDFToPPM, "ffmpeg": m.cfg.FFmpeg, "ffprobe": m.cfg.FFprobe}
}

// Check runs photos, PDFs (with pdftoppm) and videos (with ffmpeg and ffprobe) whose
// thumbnails are missing or older than Version. Other kinds, HEIC/AVIF included, are declined.
func (m *Module) Check(_ context.Context, job *sdk.Job) (bool, error) {
	k, err := SniffFile(job.Path)
	if err != nil {
		return false, FileErr(err)
	}
	if !m.supports(k, job) {
		return false, nil
	}
	return Outdated(job.MetadataDir, Version), nil
}

// Outdated reports whether the version.json a module keeps in its metadata directory dir is
// missing, unreadable or names a version other than version: the module's Check then runs
// the document again. The thumbnail and OCR modules both keep one.
func Outdated(dir string, version int) bool {
	b, err := os.ReadFile(filepath.Join(dir, versionFile))
	if err != nil {
		return true
	}
	var v struct{ Version int }
	return json.Unmarshal(b, &v) != nil || v.Version != version
}

// supports reports whether k can be drawn here, logging once per kind why not.
func (m *Module) supports(k Kind, job *sdk.Job) bool {
	var why string
	switch {
	case k.IsImage():
		return true
	case k == KindPDF && m.cfg.PDFToPPM != "":
		return true
	case k == KindVideo && m.cfg.FFmpeg != "" && m.cfg.FFprobe != "":
		return true
	case k == KindPDF:
		why = "pdftoppm (poppler-utils) is not installed: PDFs get no thumbnail"
	case k == KindVideo:
		why = "ffmpeg/ffprobe are not installed: videos get no thumbnail"
	case k == KindHEIF:
		why = "HEIC/HEIF/AVIF have no pure-Go decoder: they get no thumbnail"
	default:
		return false
	}
	if _, seen := m.declined.LoadOrStore(k, struct{}{}); !seen {
		job.Log.Warn().Str("kind", string(k)).Msg(why)
	}
	return false
}

// SniffFile reads a file's first bytes and tells its kind (the OCR module uses it too).
func SniffFile(path string) (Kind, error) {
	f, err := os.Open(path)
	if err != nil {
		return KindNone, err
	}
	defer f.Close()
	head := make([]byte, SniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return KindNone, err
	}
	return Sniff(head[:n]), nil
}

// FileErr makes a vanished file or one that is not a regular file a permanent failure; other
// errors (an unplugged drive) are retried. The OCR module classifies its files the same way.
func FileErr(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return sdk.Permanent(err)
	}
	return err
}

// Image is one written thumbnail, as recorded in the document.
type Image struct {
	File   string `json:"file"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Bytes  int    `json:"bytes"`
}

// Record is the document's "thumbnail" field.
type Record struct {
	Version     int    `json:"version"`
	Format      string `json:"format"`
	Source      string `json:"source"` // the kind drawn from: jpeg, png, ..., pdf, video
	Width       int    `json:"width"`  // the source's size, upright
	Height      int    `json:"height"`
	Orientation int    `json:"orientation,omitempty"` // EXIF orientation applied
	Small       Image  `json:"small"`
	Preview     Image  `json:"preview"`
}

// Run draws the file, writes small.jpg and preview.jpg and returns the record.
func (m *Module) Run(ctx context.Context, job *sdk.Job) (sdk.Result, error) {
	rec, err := m.Make(ctx, job.Path, job.MetadataDir)
	if err != nil {
		if ctx.Err() != nil {
			return sdk.Result{}, ctx.Err()
		}
		return sdk.Result{}, err
	}
	job.Log.Info().Msgf("%s %d×%d: small %d×%d (%d bytes), preview %d×%d (%d bytes)", rec.Source, rec.Width, rec.Height,
		rec.Small.Width, rec.Small.Height, rec.Small.Bytes, rec.Preview.Width, rec.Preview.Height, rec.Preview.Bytes)
	return sdk.Result{Document: map[string]any{"thumbnail": rec}}, nil
}

// Make draws the file at path and writes its thumbnails and version.json into dir. Files
// that can never be drawn (unknown, corrupt, over the limits) fail with an sdk.Permanent
// error.
func (m *Module) Make(ctx context.Context, path, dir string) (Record, error) {
	k, err := SniffFile(path)
	if err != nil {
		return Record{}, FileErr(err)
	}
	var img image.Image
	rec := Record{Version: Version, Format: "jpeg", Source: string(k), Orientation: 1}
	switch {
	case k.IsImage():
		open := func() (io.ReadCloser, error) { return openFile(path, k) }
		var cfg image.Config
		img, cfg, err = decodeImage(ctx, k, open, m.cfg.Limits)
		if err != nil {
			if ctx.Err() != nil {
				return Record{}, ctx.Err()
			}
			if errors.Is(err, fs.ErrNotExist) {
				return Record{}, FileErr(err)
			}
			return Record{}, sdk.Permanent(err)
		}
		rec.Width, rec.Height = cfg.Width, cfg.Height
		if k == KindJPEG || k == KindTIFF {
			if f, err := os.Open(path); err == nil {
				rec.Orientation = exifOrientation(k, f)
				f.Close()
			}
		}
	case k == KindPDF && m.cfg.PDFToPPM != "":
		img, err = m.pdfPage(ctx, path)
	case k == KindVideo && m.cfg.FFmpeg != "" && m.cfg.FFprobe != "":
		img, err = m.videoFrame(ctx, path)
	default:
		return Record{}, sdk.Permanent(fmt.Errorf("no thumbnail for this kind of file (%q)", cmpKind(k)))
	}
	if err != nil {
		return Record{}, err
	}
	if !k.IsImage() {
		rec.Width, rec.Height = img.Bounds().Dx(), img.Bounds().Dy()
	}
	b := img.Bounds()
	pw, ph := fitWithin(b.Dx(), b.Dy(), m.cfg.PreviewSize)
	preview := shrink(img, pw, ph)
	sw, sh := fitWithin(pw, ph, m.cfg.SmallSize)
	small := preview
	if sw != pw || sh != ph {
		small = shrink(preview, sw, sh)
	}
	preview, small = orient(preview, rec.Orientation), orient(small, rec.Orientation)
	if rec.Orientation >= 5 {
		rec.Width, rec.Height = rec.Height, rec.Width
	}
	if rec.Orientation == 1 {
		rec.Orientation = 0
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Record{}, err
	}
	if rec.Preview, err = m.write(dir, PreviewFile, preview); err != nil {
		return Record{}, err
	}
	if rec.Small, err = m.write(dir, SmallFile, small); err != nil {
		return Record{}, err
	}
	v, _ := json.Marshal(map[string]int{"version": Version})
	if err := writeFileAtomic(filepath.Join(dir, versionFile), v); err != nil {
		return Record{}, err
	}
	return rec, nil
}

func cmpKind(k Kind) string {
	if k == KindNone {
		return "unknown"
	}
	return string(k)
}

// openFile opens path for a decoder: buffered, except TIFF, whose decoder reads at offsets.
func openFile(path string, k Kind) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil || k == KindTIFF {
		return f, err
	}
	return struct {
		io.Reader
		io.Closer
	}{bufio.NewReaderSize(f, 64<<10), f}, nil
}

// write encodes img as JPEG into dir/name (through a temporary file and a rename).
func (m *Module) write(dir, name string, img *image.RGBA) (Image, error) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: m.cfg.Quality}); err != nil {
		return Image{}, fmt.Errorf("encode %s: %w", name, err)
	}
	if err := writeFileAtomic(filepath.Join(dir, name), buf.Bytes()); err != nil {
		return Image{}, err
	}
	return Image{File: name, Width: img.Rect.Dx(), Height: img.Rect.Dy(), Bytes: buf.Len()}, nil
}

func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// pdfPage draws a PDF's first page with pdftoppm, scaled to the preview size, and decodes it.
func (m *Module) pdfPage(ctx context.Context, path string) (image.Image, error) {
	tmp, err := os.MkdirTemp("", "thumbnail-pdf-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "page")
	cmd := exec.CommandContext(ctx, m.cfg.PDFToPPM, "-f", "1", "-l", "1", "-singlefile", "-scale-to",
		strconv.Itoa(m.cfg.PreviewSize), "-png", path, out) // path is absolute: never an option
	if err := runTool(ctx, cmd); err != nil {
		return nil, fmt.Errorf("pdftoppm: %w", err)
	}
	return m.decodeRendered(ctx, out+".png", KindPNG)
}

// videoFrame takes a frame from about 10% into a video with ffmpeg, scaled to the preview
// size, and decodes it.
func (m *Module) videoFrame(ctx context.Context, path string) (image.Image, error) {
	probe := exec.CommandContext(ctx, m.cfg.FFprobe, "-v", "error", "-show_entries", "format=duration",
		"-of", "default=noprint_wrappers=1:nokey=1", "-i", "file:"+path)
	var at float64
	if out, err := probe.Output(); err == nil {
		if d, err := strconv.ParseFloat(string(bytes.TrimSpace(out)), 64); err == nil && d > 0 {
			at = d / 10
		}
	} else if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	tmp, err := os.MkdirTemp("", "thumbnail-video-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "frame.png")
	size := strconv.Itoa(m.cfg.PreviewSize) // never enlarged
	cmd := exec.CommandContext(ctx, m.cfg.FFmpeg, "-nostdin", "-v", "error", "-ss", strconv.FormatFloat(at, 'f', 3, 64),
		"-i", "file:"+path, "-frames:v", "1", "-an", "-sn",
		"-vf", "scale=w='min("+size+",iw)':h='min("+size+",ih)':force_original_aspect_ratio=decrease", "-y", out)
	if err := runTool(ctx, cmd); err != nil {
		return nil, fmt.Errorf("ffmpeg: %w", err)
	}
	return m.decodeRendered(ctx, out, KindPNG)
}

// decodeRendered decodes what a tool wrote; a tool that wrote nothing means the file has no
// page or frame to draw (permanent).
func (m *Module) decodeRendered(ctx context.Context, path string, k Kind) (image.Image, error) {
	img, _, err := decodeImage(ctx, k, func() (io.ReadCloser, error) { return openFile(path, k) }, m.cfg.Limits)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, sdk.Permanent(fmt.Errorf("no image drawn: %w", err))
	}
	return img, nil
}

// runTool runs an external tool with a bounded stderr; a non-zero exit is permanent (the file
// cannot be drawn), running out of time is not.
func runTool(ctx context.Context, cmd *exec.Cmd) error {
	stderr := &sdk.LimitedBuffer{Max: 4096}
	cmd.Stderr = stderr
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return sdk.Permanent(fmt.Errorf("%w: %s", err, bytes.TrimSpace(stderr.Bytes())))
	}
	return nil
}
