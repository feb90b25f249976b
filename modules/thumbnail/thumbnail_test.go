package thumbnail

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/sdk"
	"github.com/homeindex/homeindex/sdk/moduletest"
	"github.com/rs/zerolog"
	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// Every photo format gives a small thumbnail and a preview of the right size, as JPEG files,
// recorded with their sizes.
func TestFormats(t *testing.T) {
	t.Parallel()
	src := photoLike(1400, 700, 7)
	dir := t.TempDir()
	enc := map[string]func(string) error{
		"a.jpg": func(p string) error { return os.WriteFile(p, encodeJPEG(t, src, 90), 0o644) },
		"a.png": func(p string) error { return encodeTo(p, func(b *bytes.Buffer) error { return png.Encode(b, src) }) },
		"a.gif": func(p string) error {
			return encodeTo(p, func(b *bytes.Buffer) error { return gif.Encode(b, src, &gif.Options{NumColors: 256, Drawer: draw.Src}) })
		},
		"a.tif": func(p string) error {
			return encodeTo(p, func(b *bytes.Buffer) error { return tiff.Encode(b, src, nil) })
		},
		"a.bmp": func(p string) error { return encodeTo(p, func(b *bytes.Buffer) error { return bmp.Encode(b, src) }) },
		"a.webp": func(p string) error { // ffmpeg's libwebp is the producer
			png := filepath.Join(dir, "for-webp.png")
			if err := encodeTo(png, func(b *bytes.Buffer) error { return png_(b, src) }); err != nil {
				return err
			}
			tool(t, "ffmpeg", "-v", "error", "-y", "-i", png, "-c:v", "libwebp", "-quality", "80", p)
			return nil
		},
	}
	m := New(Config{})
	for name, mk := range enc {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if err := mk(p); err != nil {
				t.Fatal(err)
			}
			rec, out, err := makeThumbs(t, m, p)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.TrimPrefix(filepath.Ext(name), ".")
			want = map[string]string{"jpg": "jpeg", "tif": "tiff"}[want] + map[bool]string{true: want}[want != "jpg" && want != "tif"]
			if rec.Source != want || rec.Format != "jpeg" || rec.Width != 1400 || rec.Height != 700 {
				t.Errorf("record %+v", rec)
			}
			for _, c := range []struct {
				img  Image
				w, h int
			}{{rec.Preview, 1280, 640}, {rec.Small, 256, 128}} {
				got := readJPEG(t, filepath.Join(out, c.img.File)).Bounds()
				st, _ := os.Stat(filepath.Join(out, c.img.File))
				if got.Dx() != c.w || got.Dy() != c.h || c.img.Width != c.w || c.img.Height != c.h || st == nil || int(st.Size()) != c.img.Bytes {
					t.Errorf("%s: %v on disk, recorded %+v; want %d×%d", c.img.File, got, c.img, c.w, c.h)
				}
			}
			// The preview looks like the source: mean colour within a few levels.
			if d := meanDiff(src, readJPEG(t, filepath.Join(out, PreviewFile))); d > 6 {
				t.Errorf("preview differs from the source by %.1f levels on average", d)
			}
		})
	}
}

func png_(b *bytes.Buffer, img image.Image) error { return png.Encode(b, img) }

func encodeTo(path string, enc func(*bytes.Buffer) error) error {
	var b bytes.Buffer
	if err := enc(&b); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// meanDiff compares the mean colours of two images.
func meanDiff(a, b image.Image) float64 {
	mean := func(img image.Image) [3]float64 {
		var s [3]float64
		bd := img.Bounds()
		n := 0
		for y := bd.Min.Y; y < bd.Max.Y; y += 3 {
			for x := bd.Min.X; x < bd.Max.X; x += 3 {
				r, g, bb, _ := img.At(x, y).RGBA()
				s[0] += float64(r >> 8)
				s[1] += float64(g >> 8)
				s[2] += float64(bb >> 8)
				n++
			}
		}
		for i := range s {
			s[i] /= float64(n)
		}
		return s
	}
	ma, mb := mean(a), mean(b)
	d := 0.0
	for i := range ma {
		d += abs(ma[i] - mb[i])
	}
	return d / 3
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// Orientations 1-8, set by exiftool on the same stored pixels: the thumbnails are upright.
// The stored image has red, green, blue and white quadrants; want lists, for each orientation,
// which stored quadrant shows at the upright top-left, top-right, bottom-left, bottom-right.
func TestOrientation(t *testing.T) {
	t.Parallel()
	want := map[int][4]int{1: {0, 1, 2, 3}, 2: {1, 0, 3, 2}, 3: {3, 2, 1, 0}, 4: {2, 3, 0, 1},
		5: {0, 2, 1, 3}, 6: {2, 0, 3, 1}, 7: {3, 1, 2, 0}, 8: {1, 3, 0, 2}}
	colours := [4]color.RGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {255, 255, 255, 255}}
	base := encodeJPEG(t, quadrants(600, 300), 95)
	m := New(Config{})
	for o := 1; o <= 8; o++ {
		t.Run(fmt.Sprint(o), func(t *testing.T) {
			t.Parallel()
			p := writeTemp(t, "o.jpg", base)
			tool(t, "exiftool", "-q", "-overwrite_original", fmt.Sprintf("-Orientation#=%d", o), p)
			rec, out, err := makeThumbs(t, m, p)
			if err != nil {
				t.Fatal(err)
			}
			w, h := 600, 300
			if o >= 5 {
				w, h = h, w
			}
			if rec.Width != w || rec.Height != h || (o > 1 && rec.Orientation != o) {
				t.Errorf("record %+v, want %d×%d orientation %d", rec, w, h, o)
			}
			for _, f := range []string{SmallFile, PreviewFile} {
				img := readJPEG(t, filepath.Join(out, f))
				b := img.Bounds()
				if (b.Dx() > b.Dy()) != (w > h) {
					t.Errorf("%s is %v, want the shape of %d×%d", f, b, w, h)
				}
				pts := [4]image.Point{{b.Dx() / 4, b.Dy() / 4}, {3 * b.Dx() / 4, b.Dy() / 4}, {b.Dx() / 4, 3 * b.Dy() / 4}, {3 * b.Dx() / 4, 3 * b.Dy() / 4}}
				for i, pt := range pts {
					r, g, bb, _ := img.At(pt.X, pt.Y).RGBA()
					c := colours[want[o][i]]
					if d := absDiff(r>>8, c.R) + absDiff(g>>8, c.G) + absDiff(bb>>8, c.B); d > 60 {
						t.Errorf("%s quadrant %d is %d,%d,%d; want %v", f, i, r>>8, g>>8, bb>>8, c)
					}
				}
			}
		})
	}
}

func absDiff(a uint32, b uint8) uint32 {
	if a > uint32(b) {
		return a - uint32(b)
	}
	return uint32(b) - a
}

// A PDF's first page (a scanned page wrapped by img2pdf) and a video frame (ffmpeg's test
// source) get thumbnails through pdftoppm and ffmpeg; small images are not enlarged.
func TestPDFAndVideo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	page := filepath.Join(dir, "page.png")
	if err := encodeTo(page, func(b *bytes.Buffer) error { return png.Encode(b, quadrants(850, 1100)) }); err != nil {
		t.Fatal(err)
	}
	pdf := filepath.Join(dir, "scan.pdf")
	tool(t, "img2pdf", "--pagesize", "A4", "-o", pdf, page)
	video := filepath.Join(dir, "clip.mp4")
	tool(t, "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=duration=4:size=640x360:rate=10", "-pix_fmt", "yuv420p", video)
	m := New(Config{})
	rec, out, err := makeThumbs(t, m, pdf)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Source != "pdf" || rec.Preview.Height != 1280 || rec.Preview.Width < 880 || rec.Preview.Width > 930 || rec.Small.Height != 256 {
		t.Errorf("pdf record %+v", rec)
	}
	if img := readJPEG(t, filepath.Join(out, SmallFile)); img.Bounds().Dy() != 256 {
		t.Errorf("pdf small %v", img.Bounds())
	}
	rec, out, err = makeThumbs(t, m, video)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Source != "video" || rec.Width != 640 || rec.Height != 360 || rec.Preview.Width != 640 || rec.Small.Width != 256 || rec.Small.Height != 144 {
		t.Errorf("video record %+v", rec)
	}
	readJPEG(t, filepath.Join(out, PreviewFile))
}

// Check runs photos, PDFs and videos, declines other files and HEIC, and declines PDFs and
// videos (logging it once) when their tool is missing; a current version.json skips the file.
func TestCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string][]byte{
		"a.jpg":  encodeJPEG(t, photoLike(64, 64, 1), 80),
		"a.txt":  []byte("just some text\n"),
		"a.heic": append([]byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), make([]byte, 64)...),
		"a.pdf":  []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n"),
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	job := func(name string) *sdk.Job {
		return &sdk.Job{Path: filepath.Join(dir, name), MetadataDir: filepath.Join(dir, "meta-"+name), Log: zerolog.New(&logs)}
	}
	with, without := New(Config{}), New(Config{PDFToPPM: "-", FFmpeg: "-"})
	for _, c := range []struct {
		m    *Module
		name string
		want bool
	}{{with, "a.jpg", true}, {with, "a.txt", false}, {with, "a.heic", false}, {with, "a.pdf", true},
		{without, "a.pdf", false}, {without, "a.pdf", false}, {without, "a.jpg", true}} {
		if got, err := c.m.Check(context.Background(), job(c.name)); got != c.want || err != nil {
			t.Errorf("Check %s = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if n := strings.Count(logs.String(), "pdftoppm (poppler-utils) is not installed"); n != 1 {
		t.Errorf("the missing pdftoppm logged %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "HEIC/HEIF/AVIF have no pure-Go decoder") {
		t.Errorf("HEIC declined silently:\n%s", logs.String())
	}
	j := job("a.jpg")
	if _, err := with.Make(context.Background(), j.Path, j.MetadataDir); err != nil {
		t.Fatal(err)
	}
	if got, err := with.Check(context.Background(), j); got || err != nil {
		t.Errorf("Check after a run = %v, %v; want false", got, err)
	}
	if _, err := with.Check(context.Background(), job("gone.jpg")); !sdk.IsPermanent(err) {
		t.Errorf("Check of a vanished file: %v, want a permanent error", err)
	}
}

// Through the SDK and a real redis-server: the document gets "thumbnail" and the files are in
// the module's metadata directory.
func TestThroughSDK(t *testing.T) {
	t.Parallel()
	out := moduletest.Run(t, New(Config{}),
		moduletest.File("photos/p.jpg", string(encodeJPEG(t, photoLike(1600, 1200, 3), 85))),
		moduletest.File("notes.txt", "no picture here"),
		moduletest.File("broken.jpg", string(encodeJPEG(t, photoLike(800, 600, 4), 85)[:2000])),
		moduletest.Configure(func(c *sdk.Config) { c.Timeout = 60 * time.Second })) // -race on a loaded machine
	p, txt, broken := out[0], out[1], out[2]
	var rec Record
	if err := json.Unmarshal(p.Fields["thumbnail"], &rec); err != nil || !p.Ran {
		t.Fatalf("photo outcome %+v: %v", p, err)
	}
	if rec.Preview.Width != 1280 || rec.Preview.Height != 960 || rec.Small.Width != 256 || rec.Small.Height != 192 || rec.Format != "jpeg" {
		t.Errorf("record %+v", rec)
	}
	for _, f := range []string{SmallFile, PreviewFile, "version.json", sdk.LogFileName} {
		if len(p.Files[f]) == 0 {
			t.Errorf("no %s in the metadata directory (%d files)", f, len(p.Files))
		}
	}
	if !txt.Skipped {
		t.Errorf("text file %+v, want skipped", txt)
	}
	if !broken.Permanent || !strings.Contains(broken.Err, "decode jpeg") {
		t.Errorf("truncated JPEG: %+v, want a permanent decode failure", broken)
	}
}
