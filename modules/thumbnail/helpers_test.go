package thumbnail

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// photoLike draws a w×h picture with gradients, texture and edges, so encoders and the
// resampler do the work a photo asks of them (a flat colour compresses to nothing).
func photoLike(w, h int, seed uint32) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	s := seed | 1
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			s ^= s << 13
			s ^= s >> 17
			s ^= s << 5
			n := uint8(s & 0x1f)
			i := img.PixOffset(x, y)
			img.Pix[i] = uint8(x*255/w) ^ n
			img.Pix[i+1] = uint8(y*255/h) + n
			img.Pix[i+2] = uint8((x+y)/7%2*120) + n
			img.Pix[i+3] = 0xff
		}
	}
	return img
}

// quadrants draws a w×h image whose quadrants are red, green, blue and white (TL, TR, BL, BR).
func quadrants(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	cs := [4]color.RGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {255, 255, 255, 255}}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			q := 0
			if x >= w/2 {
				q++
			}
			if y >= h/2 {
				q += 2
			}
			img.SetRGBA(x, y, cs[q])
		}
	}
	return img
}

func encodeJPEG(t testing.TB, img image.Image, q int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeTemp(t testing.TB, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tool runs an external producer (exiftool, ffmpeg, img2pdf: installed by make deps).
func tool(t testing.TB, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// readJPEG decodes a JPEG file the module wrote.
func readJPEG(t testing.TB, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := jpeg.Decode(f)
	if err != nil {
		t.Fatalf("%s is not a JPEG: %v", path, err)
	}
	return img
}

func makeThumbs(t testing.TB, m *Module, path string) (Record, string, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	rec, err := m.Make(context.Background(), path, dir)
	return rec, dir, err
}
