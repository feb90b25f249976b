package thumbnail

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/sdk"
)

// pngWith builds a PNG whose header claims w×h (8-bit, colour type ct) with the given
// compressed image data.
func pngWith(w, h uint32, ct byte, idat []byte) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(data)))
		b.Write(l[:])
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(data)
		b.WriteString(typ)
		b.Write(data)
		binary.BigEndian.PutUint32(l[:], crc.Sum32())
		b.Write(l[:])
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, ct
	chunk("IHDR", ihdr)
	chunk("IDAT", idat)
	chunk("IEND", nil)
	return b.Bytes()
}

// zeros compresses n zero bytes (a decompression bomb's payload).
func zeros(n int) []byte {
	var b bytes.Buffer
	z, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	row := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, len(row))
		z.Write(row[:k])
		n -= k
	}
	z.Close()
	return b.Bytes()
}

// jpegClaiming patches a real JPEG's frame header to claim w×h.
func jpegClaiming(t *testing.T, w, h uint16) []byte {
	b := encodeJPEG(t, photoLike(64, 64, 9), 80)
	i := bytes.Index(b, []byte{0xff, 0xc0})
	if i < 0 {
		t.Fatal("no SOF0")
	}
	binary.BigEndian.PutUint16(b[i+5:], h)
	binary.BigEndian.PutUint16(b[i+7:], w)
	return b
}

// Hostile files fail permanently with a clear reason, quickly and without allocating what
// they claim; an animation with thousands of frames is drawn from its first frame. Not
// parallel: it measures the process's allocations.
func TestHostile(t *testing.T) {
	bomb := pngWith(12000, 12000, 0, zeros(12000*12001)) // 144 MP of grey, a few hundred KB
	var frames bytes.Buffer
	{
		pal := color.Palette{color.RGBA{255, 0, 0, 255}, color.RGBA{0, 0, 255, 255}}
		g := &gif.GIF{}
		for i := 0; i < 3000; i++ {
			f := image.NewPaletted(image.Rect(0, 0, 300, 200), pal)
			for j := range f.Pix {
				f.Pix[j] = uint8(min(i, 1)) // frame 0 red, every other blue
			}
			g.Image = append(g.Image, f)
			g.Delay = append(g.Delay, 1)
		}
		if err := gif.EncodeAll(&frames, g); err != nil {
			t.Fatal(err)
		}
	}
	good := encodeJPEG(t, photoLike(800, 600, 5), 85)
	cases := []struct {
		name string
		data []byte
		want string // in the permanent error; "" for success
	}{
		{"gigapixel.png", pngWith(100000, 100000, 6, zeros(100)), "over the 100.0 MP limit"},
		{"gigapixel.jpg", jpegClaiming(t, 65000, 65000), "over the 100.0 MP limit"},
		{"bomb.png", bomb, "over the 100.0 MP limit"},
		{"wide16.png", pngWith(9000, 9000, 6, zeros(100))[:0:0], ""}, // replaced below
		{"zero.png", pngWith(0, 10, 0, zeros(10)), "png"},
		{"truncated.jpg", good[:len(good)/3], "decode jpeg"},
		{"noise.png", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0x5a, 0x13, 0x77}, 3000)...), "png"},
		{"truncated.gif", frames.Bytes()[:60], "gif"},
		{"frames.gif", frames.Bytes(), ""},
	}
	// A 16-bit RGBA header under the pixel cap but over the decoded-size cap (81 MP × 8 bytes).
	wide := pngWith(9000, 9000, 6, zeros(100))
	wide[24] = 16
	binary.BigEndian.PutUint32(wide[29:], crc32.ChecksumIEEE(wide[12:29]))
	cases[3] = struct {
		name string
		data []byte
		want string
	}{"wide16.png", wide, "over the 512 MB limit"}

	m := New(Config{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeTemp(t, c.name, c.data)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			rec, _, err := makeThumbs(t, m, p)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else if !sdk.IsPermanent(err) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v (permanent %v), want a permanent error containing %q", err, sdk.IsPermanent(err), c.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MB", alloc>>20)
			}
			if took > 20*time.Second {
				t.Errorf("took %v", took)
			}
			if c.name == "frames.gif" && (rec.Width != 300 || rec.Small.Width != 256) {
				t.Errorf("record %+v", rec)
			}
			t.Logf("%v in %v", err, took)
		})
	}
}

// The first frame of an animation is the one drawn.
func TestGIFFirstFrame(t *testing.T) {
	t.Parallel()
	pal := color.Palette{color.RGBA{255, 0, 0, 255}, color.RGBA{0, 0, 255, 255}}
	g := &gif.GIF{}
	for i := 0; i < 3; i++ {
		f := image.NewPaletted(image.Rect(0, 0, 40, 40), pal)
		for j := range f.Pix {
			f.Pix[j] = uint8(min(i, 1))
		}
		g.Image, g.Delay = append(g.Image, f), append(g.Delay, 1)
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, g); err != nil {
		t.Fatal(err)
	}
	_, out, err := makeThumbs(t, New(Config{}), writeTemp(t, "a.gif", b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if r, _, bb, _ := readJPEG(t, out+"/"+SmallFile).At(20, 20).RGBA(); r>>8 < 200 || bb>>8 > 60 {
		t.Errorf("thumbnail is not the red first frame: r %d b %d", r>>8, bb>>8)
	}
}

// A job whose deadline has passed stops at once with the context's error (retried, not
// parked).
func TestDeadline(t *testing.T) {
	t.Parallel()
	p := writeTemp(t, "a.jpg", encodeJPEG(t, photoLike(400, 300, 2), 80))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(Config{}).Make(ctx, p, t.TempDir())
	if err == nil || sdk.IsPermanent(err) {
		t.Errorf("cancelled Make: %v, want the context's error", err)
	}
}
