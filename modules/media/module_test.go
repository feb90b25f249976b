package media

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/sdk"
	"github.com/homeindex/homeindex/sdk/moduletest"
)

// TestThroughTheSDK serves the module with a real SDK worker and redis-server: a tagged JPEG
// comes back with "media" and a top-level "_geo", and its camera as content; a text file is
// declined by check.
func TestThroughTheSDK(t *testing.T) {
	t.Parallel()
	p := tempPath(t, "photo.jpg")
	taggedJPEG(t, p)
	jpg, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	out := moduletest.Run(t, New(Config{}), moduletest.File("photos/photo.jpg", string(jpg)), moduletest.File("notes.txt", "just words"))
	photo, text := out[0], out[1]
	if !photo.Ran || photo.Err != "" {
		t.Fatalf("photo: %+v", photo)
	}
	var m map[string]any
	if err := json.Unmarshal(photo.Fields[Field], &m); err != nil || m["camera"] != "Canon EOS 5D Mark IV" || m["date"] != "2019-07-14T15:04:05+02:00" {
		t.Errorf("media %s (%v)", photo.Fields[Field], err)
	}
	if g := string(photo.Fields[GeoField]); g != `{"lat":48.8584,"lng":2.2945}` {
		t.Errorf("_geo %s", g)
	}
	if !strings.Contains(string(photo.Content), "Canon EOS 5D Mark IV") {
		t.Errorf("content %s", photo.Content)
	}
	if !text.Skipped {
		t.Errorf("text file: %+v, want declined by check", text)
	}
}

// TestParserPanicIsAPermanentFailure: a parser that panics ends the file as a permanent
// failure naming the panic; the process goes on. (Not parallel: it swaps the photo reader.)
func TestParserPanicIsAPermanentFailure(t *testing.T) {
	p := tempPath(t, "photo.jpg")
	plainJPEG(t, p, 8, 8)
	saved := photoReader
	photoReader = func(*limitedFile) (*Info, error) { panic("index out of range [7] with length 3") }
	defer func() { photoReader = saved }()
	_, err := New(Config{}).Extract(context.Background(), p, KindPhoto)
	if !sdk.IsPermanent(err) || !strings.Contains(err.Error(), "parser panic: index out of range") {
		t.Fatalf("err %v", err)
	}
}
