package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/rssprobe"
	"github.com/homeindex/homeindex/sdk"
)

// pngHeader is a PNG signature and an IHDR chunk (with its CRC) claiming w×h pixels, then an
// IEND: no pixel data at all.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	chunk("IHDR", ihdr)
	chunk("IEND", nil)
	return b.Bytes()
}

// webpHeader is a RIFF/WEBP file whose VP8X chunk claims w×h pixels.
func webpHeader(w, h int) []byte {
	c := make([]byte, 18)
	copy(c, "VP8X")
	binary.LittleEndian.PutUint32(c[4:], 10)
	w, h = w-1, h-1
	c[12], c[13], c[14] = byte(w), byte(w>>8), byte(w>>16)
	c[15], c[16], c[17] = byte(h), byte(h>>8), byte(h>>16)
	b := append([]byte("RIFF\x00\x00\x00\x00WEBP"), c...)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-8))
	return b
}

// hugeFLAC takes an ffmpeg FLAC and puts, right after STREAMINFO, a PICTURE block whose
// picture claims 4 GB (0xFFFFFFFF bytes of data), and a second file where the block itself
// claims 16 MB beyond the end of the file.
func hugeFLAC(t testing.TB, dir string) (claims4GB, pastEnd string) {
	t.Helper()
	src := dir + "/src.flac"
	ffmpeg(t, "-f", "lavfi", "-i", "sine=duration=3", "-c:a", "flac", src)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	const afterStreaminfo = 4 + 4 + 34
	b[4] &^= 0x80 // STREAMINFO is no longer the last block
	var pic bytes.Buffer
	for _, v := range []uint32{3, 9} { // picture type, MIME length
		_ = binary.Write(&pic, binary.BigEndian, v)
	}
	pic.WriteString("image/png")
	for _, v := range []uint32{0, 1, 1, 24, 0, 0xFFFFFFFF} { // description, w, h, depth, colours, data length
		_ = binary.Write(&pic, binary.BigEndian, v)
	}
	pic.WriteString("not 4 GB of picture")
	mk := func(name string, blockLen int) string {
		var out bytes.Buffer
		out.Write(b[:afterStreaminfo])
		out.Write([]byte{6, byte(blockLen >> 16), byte(blockLen >> 8), byte(blockLen)})
		out.Write(pic.Bytes())
		out.Write(b[afterStreaminfo:])
		p := dir + "/" + name
		if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return mk("claims-4gb.flac", pic.Len()), mk("past-end.flac", 0xFFFFFF)
}

// hugeID3 is an MP3 whose ID3v2 tag claims 256 MB and whose picture frame claims 200 MB, in
// a sparse file of 300 MB: a tag parser that believed it would hold 200 MB.
func hugeID3(t testing.TB, path string) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("ID3\x03\x00\x00\x7f\x7f\x7f\x7f")
	b.WriteString("APIC")
	_ = binary.Write(&b, binary.BigEndian, uint32(200<<20))
	b.WriteString("\x00\x00\x00image/jpeg\x00\x03\x00")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 300<<20); err != nil {
		t.Fatal(err)
	}
}

// hostileSet writes the hostile files into dir and returns their paths.
func hostileSet(t testing.TB, dir string) []string {
	t.Helper()
	write := func(name string, b []byte) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := hugeFLAC(t, dir)
	hugeID3(t, dir+"/huge-id3.mp3")
	return []string{
		write("100k.png", pngHeader(100000, 100000)),
		write("100k.webp", webpHeader(100000, 100000)),
		a, b, dir + "/huge-id3.mp3",
	}
}

// TestHostileHugeDimensions: headers claiming 100,000 × 100,000 pixels are reported as they
// are, at once, without decoding (or allocating) anything.
func TestHostileHugeDimensions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []string{"100k.png", "100k.webp"} {
		b := pngHeader(100000, 100000)
		if strings.HasSuffix(p, ".webp") {
			b = webpHeader(100000, 100000)
		}
		if err := os.WriteFile(dir+"/"+p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		f := extract(t, dir+"/"+p, KindPhoto).Fields()
		if f["width"] != 100000 || f["height"] != 100000 {
			t.Errorf("%s: %v", p, f)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s took %v", p, d)
		}
	}
}

// TestHostileFLACPicture: a picture block claiming 4 GB, and one claiming to run 16 MB past the
// end of the file, are skipped unread: the stream's duration is still read.
func TestHostileFLACPicture(t *testing.T) {
	t.Parallel()
	a, b := hugeFLAC(t, t.TempDir())
	for _, p := range []string{a, b} {
		f := extract(t, p, KindAudio).Fields()
		if d, _ := f["duration"].(float64); d < 2.9 || d > 3.1 {
			t.Errorf("%s: %v", filepath.Base(p), f)
		}
	}
}

// TestHostileHugeID3: a picture frame claiming 200 MB in a 300 MB sparse file hits the read
// limit: a permanent failure that says so.
func TestHostileHugeID3(t *testing.T) {
	t.Parallel()
	p := tempPath(t, "huge.mp3")
	hugeID3(t, p)
	_, err := New(Config{}).Extract(context.Background(), p, KindAudio)
	if !sdk.IsPermanent(err) || !strings.Contains(err.Error(), "read limit") {
		t.Fatalf("err %v, want a permanent failure naming the read limit", err)
	}
}

// TestHostileTruncatedAndCorrupt: every fixture format cut short at many lengths, and with
// random bytes overwritten, ends as a result or a permanent failure: never a panic, never a
// retry-able error.
func TestHostileTruncatedAndCorrupt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := map[string]Kind{}
	jpg := dir + "/a.jpg"
	taggedJPEG(t, jpg)
	src[jpg] = KindPhoto
	for _, ext := range []string{"png", "webp", "tif"} {
		p := dir + "/a." + ext
		ffmpeg(t, "-i", jpg, p)
		exiftool(t, p, cameraTags...)
		src[p] = KindPhoto
	}
	run(t, "heif-enc", "-q", "50", "-o", dir+"/a.heic", jpg)
	src[dir+"/a.heic"] = KindPhoto
	for _, c := range []struct{ ext, codec string }{{"mp3", "libmp3lame"}, {"flac", "flac"}, {"ogg", "libvorbis"}, {"opus", "libopus"}, {"m4a", "aac"}} {
		p := dir + "/a." + c.ext
		taggedAudio(t, p, "-c:a", c.codec)
		src[p] = KindAudio
	}
	mod := New(Config{})
	rng := rand.New(rand.NewPCG(1, 2))
	bad := dir + "/bad"
	var ok, failed int
	for p, kind := range src {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var variants [][]byte
		for _, n := range []int{0, 1, 7, 12, 33, 100, 300, 1000, len(b) / 3, len(b) / 2, len(b) - 1} {
			variants = append(variants, b[:min(n, len(b))])
		}
		for range 40 {
			v := bytes.Clone(b)
			for range 1 + rng.IntN(8) {
				v[rng.IntN(min(len(v), 4096))] = byte(rng.Uint32())
			}
			variants = append(variants, v)
		}
		for i, v := range variants {
			if err := os.WriteFile(bad, v, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := mod.Extract(context.Background(), bad, kind)
			switch {
			case err == nil:
				ok++
			case sdk.IsPermanent(err):
				failed++
			default:
				t.Errorf("%s variant %d: %v is not permanent", filepath.Base(p), i, err)
			}
		}
	}
	t.Logf("%d damaged files read, %d permanent failures", ok, failed)
}

// TestVanishedFile: a file that passes Check and is gone when Run starts is a permanent
// failure that says so.
func TestVanishedFile(t *testing.T) {
	t.Parallel()
	p := tempPath(t, "gone.jpg")
	taggedJPEG(t, p)
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	mod := New(Config{})
	job := testJob(p, "image/jpeg", st.Size(), &log)
	if ok, err := mod.Check(context.Background(), job); !ok || err != nil {
		t.Fatalf("check %v %v", ok, err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	_, err = mod.Run(context.Background(), job)
	if !sdk.IsPermanent(err) || !strings.Contains(err.Error(), "file is gone") {
		t.Fatalf("run: %v, want a permanent 'file is gone'", err)
	}
	// A directory where the file was is not read either.
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := mod.Run(context.Background(), job); !sdk.IsPermanent(err) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("run on a directory: %v", err)
	}
}

// rssProbe makes the test binary the probe parent rssprobe.CommandPeakKB measures through.
const rssProbe = "MEDIA_MODULE_RSS_PROBE"

func TestMain(m *testing.M) {
	rssprobe.ServeCommand(rssProbe)
	os.Exit(m.Run())
}

// TestPeakRSSOnHostileFiles builds media-module (without the race detector, whatever this test
// runs with: its shadow memory would be measured too), runs `media-module inspect` over the
// hostile files (100k² headers, the FLAC pictures, the 300 MB MP3 whose tag claims 200 MB)
// under the RSS probe and checks the module's peak RSS (ru_maxrss) against 256 MB.
func TestPeakRSSOnHostileFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := hostileSet(t, dir)
	bin := filepath.Join(t.TempDir(), "media-module")
	build := exec.Command("go", "build", "-o", bin, "github.com/homeindex/homeindex/cmd/media-module")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// The probe's output is the module's; inspect exits 1 as the ID3 file fails, as it should.
	out, kb := rssprobe.CommandPeakKB(t, rssProbe, append([]string{bin, "inspect"}, files...)...)
	if n := strings.Count(string(out), "\n"); n != len(files) {
		t.Fatalf("inspect printed %d lines for %d files:\n%s", n, len(files), out)
	}
	mb := kb >> 10
	t.Logf("peak RSS %d MB over the hostile files\n%s", mb, out)
	if mb > 256 {
		t.Errorf("peak RSS %d MB, goal ≤ 256 MB", mb)
	}
}
