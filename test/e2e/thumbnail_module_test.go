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
	"sync"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// builtModules holds module binaries built on first use (thumbnail-module, ocr-module), next
// to the binaries TestMain built (removed with them).
var builtModules struct {
	sync.Mutex
	paths map[string]string
}

// moduleBinary builds ./cmd/<name> once per run (with -race when the suite has it).
func moduleBinary(t *testing.T, name string) string {
	t.Helper()
	builtModules.Lock()
	defer builtModules.Unlock()
	if p, ok := builtModules.paths[name]; ok {
		return p
	}
	out := filepath.Join(filepath.Dir(bin.homeindexd), name)
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./cmd/"+name)...)
	cmd.Dir = repoRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, b)
	}
	if builtModules.paths == nil {
		builtModules.paths = map[string]string{}
	}
	builtModules.paths[name] = out
	return out
}

// texturedJPEG is a w×h JPEG with gradients and a diagonal stripe pattern.
func texturedJPEG(t *testing.T, w, h int) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetRGBA(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8((x + y) / 9 % 2 * 200), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The thumbnail module through the daemon, on both search backends: after the chain runs,
// by-id/<id>/thumbnail/ holds small.jpg and preview.jpg, the document records them (sizes,
// format), and a text file gets nothing.
func TestThumbnailModule(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"embedded", "meilisearch"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var opts []stackOption
			if backend == "meilisearch" {
				opts = append(opts, withMeili())
			}
			s := newStack(t, []module{{Name: "thumbnail", UID: "th1"}}, opts...)
			photo := s.write("photos/2024/beach.jpg", texturedJPEG(t, 1600, 1200))
			notes := s.write("docs/notes.txt", "no picture in here")
			s.Daemon.Start()
			s.startModule("thumbnail", moduleBinary(t, "thumbnail-module"), "thumbnail", "TIMEOUT", "60")

			type img struct {
				File          string
				Width, Height int
				Bytes         int
			}
			var rec struct {
				Format         string
				Small, Preview img
			}
			waitUntil(t, 90*time.Second, "the photo's thumbnails recorded", s.docsDone([]string{photo, notes}, func(d protocol.Document) error {
				if d.ID != photo {
					if _, ok := d.Fields["thumbnail"]; ok {
						return fmt.Errorf("a text file got a thumbnail")
					}
					return nil
				}
				if err := json.Unmarshal(d.Fields["thumbnail"], &rec); err != nil {
					return fmt.Errorf("thumbnail field %s: %w", d.Fields["thumbnail"], err)
				}
				return nil
			}))
			if rec.Format != "jpeg" || rec.Small.Width != 256 || rec.Small.Height != 192 || rec.Preview.Width != 1280 || rec.Preview.Height != 960 {
				t.Errorf("recorded %+v", rec)
			}
			for _, f := range []img{rec.Small, rec.Preview} {
				b, err := s.moduleFile(photo, "thumbnail", f.File)
				if err != nil {
					t.Fatal(err)
				}
				c, err := jpeg.DecodeConfig(bytes.NewReader(b))
				if err != nil || c.Width != f.Width || c.Height != f.Height || len(b) != f.Bytes {
					t.Errorf("%s: %d×%d, %d bytes (%v); recorded %+v", f.File, c.Width, c.Height, len(b), err, f)
				}
			}
			if _, err := os.Stat(filepath.Join(s.Meta, "by-id", notes, "thumbnail", "small.jpg")); err == nil {
				t.Error("the text file has a small.jpg")
			}
			// The index has the record too.
			waitUntil(t, 30*time.Second, "the photo indexed with its thumbnail", func() error {
				hits, err := s.searchCLI(fmt.Sprintf("id = %q", photo), "")
				if err != nil || len(hits) != 1 {
					return fmt.Errorf("%d hits, %v", len(hits), err)
				}
				if _, ok := hits[0].Fields["thumbnail"]; !ok {
					return fmt.Errorf("hit without thumbnail: %v", hits[0].Fields)
				}
				return nil
			})
		})
	}
}
