package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// mediaModulesYAML is MODULES for the media module with the attributes its README section
// gives.
const mediaModulesYAML = `- name: media
  uid: "m1"
  filterable_attributes: [media.kind, media.camera, media.year, media.date_unix, media.artist, media.album, _geo]
  sortable_attributes: [media.date_unix, media.duration]
`

// mediaPhoto writes a JPEG (its pixels drawn from seed, so every photo has its own content)
// tagged by exiftool.
func mediaPhoto(t *testing.T, path string, seed int, tags ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 32, 24))
	for y := range 24 {
		for x := range 32 {
			img.Set(x, y, color.RGBA{uint8(x * seed), uint8(y + seed), uint8(seed), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tool(t, "exiftool", append(append([]string{"-q", "-overwrite_original"}, tags...), path)...)
}

func tool(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// hitNames returns the base names of the hits' first paths, in order.
func hitNames(hits []protocol.Document) []string {
	var out []string
	for _, h := range hits {
		if len(h.Paths) > 0 {
			out = append(out, filepath.Base(h.Paths[0].Path))
		}
	}
	return out
}

// TestMediaModule: daemon, Redis and the media module on a tree of photos tagged by exiftool,
// an MP3 tagged by mutagen and a text file, on both search backends. The photo fields are
// filterable (camera, a July 2019 date range, kind, artist) and sortable (newest first)
// through `homeindexd search`; on Meilisearch, _geo answers a radius filter.
func TestMediaModule(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"embedded", "meilisearch"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var opts []stackOption
			if backend == "meilisearch" {
				opts = append(opts, withMeili())
			}
			opts = append(opts, withDaemonEnv("MODULES", mediaModulesYAML))
			s := newStack(t, []module{{Name: "media", UID: "m1"}}, opts...)
			canon := []string{"-Make=Canon", "-Model=Canon EOS 5D Mark IV"}
			pixel := []string{"-Make=Google", "-Model=Pixel 7"}
			mediaPhoto(t, s.Files+"/photos/paris.jpg", 1, append(canon, "-DateTimeOriginal=2019:07:14 15:04:05", "-OffsetTimeOriginal=+02:00",
				"-GPSLatitude=48.8584", "-GPSLatitudeRef=N", "-GPSLongitude=2.2945", "-GPSLongitudeRef=E")...)
			mediaPhoto(t, s.Files+"/photos/lyon.jpg", 2, append(canon, "-DateTimeOriginal=2019:07:28 09:00:00", "-OffsetTimeOriginal=+02:00",
				"-GPSLatitude=45.764", "-GPSLatitudeRef=N", "-GPSLongitude=4.8357", "-GPSLongitudeRef=E")...)
			mediaPhoto(t, s.Files+"/photos/august.jpg", 3, append(pixel, "-DateTimeOriginal=2019:08:02 10:00:00", "-OffsetTimeOriginal=+00:00")...)
			mediaPhoto(t, s.Files+"/archive/usb1/june.jpg", 4, append(pixel, "-DateTimeOriginal=2019:06:15 12:00:00")...)
			song := s.Files + "/music/song.mp3"
			if err := os.MkdirAll(filepath.Dir(song), 0o755); err != nil {
				t.Fatal(err)
			}
			tool(t, "ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=duration=2", "-c:a", "libmp3lame", song)
			tool(t, "/usr/bin/python3", "-c", `import sys
from mutagen.id3 import ID3, TIT2, TPE1, TALB, TDRC
t = ID3(); t.add(TIT2(encoding=3, text="So What")); t.add(TPE1(encoding=3, text="Miles Davis"))
t.add(TALB(encoding=3, text="Kind of Blue")); t.add(TDRC(encoding=3, text="1959")); t.save(sys.argv[1])`, song)
			s.write("notes.txt", "not a media file")

			s.Daemon.Start()
			s.startModule("media", moduleBinary(t, "media-module"), "media", "MODULES", mediaModulesYAML, "RECORD_FILE", "")

			search := func(filter, sort string) ([]string, error) {
				args := []string{"search", "--json", "--limit", "100"}
				if filter != "" {
					args = append(args, "--filter", filter)
				}
				if sort != "" {
					args = append(args, "--sort", sort)
				}
				out, errOut, code := s.cli(args...)
				if code != 0 {
					return nil, fmt.Errorf("homeindexd %v: exit %d: %s", args, code, errOut)
				}
				var hits []protocol.Document
				for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
					if l == "" {
						continue
					}
					var d protocol.Document
					if err := json.Unmarshal([]byte(l), &d); err != nil {
						return nil, err
					}
					hits = append(hits, d)
				}
				return hitNames(hits), nil
			}
			expect := func(what, filter, sort string, want []string, ordered bool) {
				t.Helper()
				waitUntil(t, 90*time.Second, what, func() error {
					got, err := search(filter, sort)
					if err != nil {
						return err
					}
					if !ordered {
						slices.Sort(got)
						slices.Sort(want)
					}
					if !slices.Equal(got, want) {
						return fmt.Errorf("%s: got %v, want %v", filter, got, want)
					}
					return nil
				})
			}
			expect("every media file read", `media.kind EXISTS`, "", []string{"august.jpg", "june.jpg", "lyon.jpg", "paris.jpg", "song.mp3"}, false)
			expect("photos by camera", `media.camera = "Canon EOS 5D Mark IV"`, "", []string{"lyon.jpg", "paris.jpg"}, false)
			// July 2019: 2019-07-01T00:00:00Z ≤ date < 2019-08-01T00:00:00Z.
			expect("photos from July 2019", `media.kind = photo AND media.date_unix >= 1561939200 AND media.date_unix < 1564617600`, "",
				[]string{"lyon.jpg", "paris.jpg"}, false)
			expect("photos newest first", `media.kind = photo`, "media.date_unix:desc", []string{"august.jpg", "lyon.jpg", "paris.jpg", "june.jpg"}, true)
			expect("photos oldest first", `media.kind = photo`, "media.date_unix:asc", []string{"june.jpg", "paris.jpg", "lyon.jpg", "august.jpg"}, true)
			expect("audio by artist", `media.artist = "Miles Davis" AND media.year = 1959`, "", []string{"song.mp3"}, false)
			if backend == "meilisearch" {
				expect("photos within 10 km of the Eiffel tower", `_geoRadius(48.8584, 2.2945, 10000)`, "", []string{"paris.jpg"}, false)
			}
			// The text file was declined by check: no media field, no failure.
			if out, _, code := s.cli("failed"); code != 0 || !strings.Contains(out, `"parked": []`) {
				t.Errorf("homeindexd failed: exit %d\n%s", code, out)
			}
		})
	}
}
