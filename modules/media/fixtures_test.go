package media

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures are made at test time by real producers: exiftool tags photos, ffmpeg encodes
// audio and video, python3-mutagen tags audio, heif-enc converts to HEIC (`make deps` installs
// them all, scripts/install-media-tools.sh).

// run runs a producer and fails the test with its output when it fails.
func run(t testing.TB, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// plainJPEG writes a w×h JPEG encoded by Go, without EXIF.
func plainJPEG(t testing.TB, path string, w, h int) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x + y), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cameraTags are the EXIF tags exiftool writes into the photo fixtures.
var cameraTags = []string{
	"-Make=Canon", "-Model=Canon EOS 5D Mark IV", "-LensModel=EF24-70mm f/2.8L II USM",
	"-DateTimeOriginal=2019:07:14 15:04:05", "-OffsetTimeOriginal=+02:00",
	"-GPSLatitude=48.8584", "-GPSLatitudeRef=N", "-GPSLongitude=2.2945", "-GPSLongitudeRef=E",
	"-GPSAltitude=35", "-Orientation#=6",
}

// taggedJPEG writes a 64×48 JPEG tagged by exiftool with cameraTags.
func taggedJPEG(t testing.TB, path string) {
	t.Helper()
	plainJPEG(t, path, 64, 48)
	exiftool(t, path, cameraTags...)
}

func exiftool(t testing.TB, path string, tags ...string) {
	t.Helper()
	run(t, "exiftool", append(append([]string{"-q", "-overwrite_original"}, tags...), path)...)
}

// ffmpeg runs ffmpeg quietly, overwriting its output.
func ffmpeg(t testing.TB, args ...string) {
	t.Helper()
	run(t, "ffmpeg", append([]string{"-hide_banner", "-loglevel", "error", "-y"}, args...)...)
}

// mutagenScript tags an audio file: argv[1] is the file, the tags are fixed.
const mutagenScript = `
import sys, mutagen
from mutagen.id3 import ID3, TIT2, TPE1, TALB, TDRC, TRCK, TCON
from mutagen.mp4 import MP4
path = sys.argv[1]
if path.endswith(".mp3"):
    t = ID3()
    t.add(TIT2(encoding=3, text="Blue in Green"))
    t.add(TPE1(encoding=3, text="Miles Davis"))
    t.add(TALB(encoding=3, text="Kind of Blue"))
    t.add(TDRC(encoding=3, text="1959"))
    t.add(TRCK(encoding=3, text="3/5"))
    t.add(TCON(encoding=3, text="Jazz"))
    t.save(path)
elif path.endswith(".m4a"):
    f = MP4(path)
    f["\xa9nam"] = ["Blue in Green"]; f["\xa9ART"] = ["Miles Davis"]; f["\xa9alb"] = ["Kind of Blue"]
    f["\xa9day"] = ["1959"]; f["trkn"] = [(3, 5)]; f["\xa9gen"] = ["Jazz"]
    f.save()
else:
    f = mutagen.File(path)
    f["title"] = "Blue in Green"; f["artist"] = "Miles Davis"; f["album"] = "Kind of Blue"
    f["date"] = "1959"; f["tracknumber"] = "3/5"; f["genre"] = "Jazz"
    f.save()
`

// taggedAudio encodes 3 s of a sine with ffmpeg's codec for the extension and tags it with
// mutagen.
func taggedAudio(t testing.TB, path string, codecArgs ...string) {
	t.Helper()
	ffmpeg(t, append(append([]string{"-f", "lavfi", "-i", "sine=frequency=440:duration=3:sample_rate=44100"}, codecArgs...), path)...)
	mutagen(t, mutagenScript, path)
}

func mutagen(t testing.TB, script string, args ...string) {
	t.Helper()
	run(t, "/usr/bin/python3", append([]string{"-c", script}, args...)...)
}

// tempPath is a file name in a fresh temporary directory.
func tempPath(t testing.TB, name string) string {
	return filepath.Join(t.TempDir(), name)
}
