package text

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/sdk/moduletest"
)

// TestModuleThroughRedis: the handler served by the SDK worker, fed as the daemon feeds it:
// a PDF's content arrives as segments with their page, fields under "text", an image is
// declined by Check, and the module's directory holds nothing but the SDK's log.txt.
func TestModuleThroughRedis(t *testing.T) {
	t.Parallel()
	pdf, err := os.ReadFile(fixtureDir(t) + "/sample.pdf")
	if err != nil {
		t.Fatal(err)
	}
	out := moduletest.Run(t, New(),
		moduletest.File("docs/report.pdf", string(pdf)),
		moduletest.File("photos/p.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"),
		moduletest.File("notes/blob.txt", "\x00\x01\x02binary\x00\x00 content that only looks like text by its name"),
		moduletest.File("notes/empty.md", ""),
	)
	p := out[0]
	if !p.Ran || p.Err != "" {
		t.Fatalf("pdf outcome %+v", p)
	}
	var segs []map[string]any
	if err := json.Unmarshal(p.Content, &segs); err != nil || len(segs) != 3 {
		t.Fatalf("content %s: %v", p.Content, err)
	}
	if segs[1]["page"] != 2.0 || !strings.Contains(segs[1]["text"].(string), "bumblebeepdf") {
		t.Errorf("segment 2: %v", segs[1])
	}
	var f map[string]any
	if err := json.Unmarshal(p.Fields["text"], &f); err != nil || f["pages"] != 3.0 || f["title"] != "Quarterly Zebra Report" {
		t.Errorf("text fields %s: %v", p.Fields["text"], err)
	}
	for name := range p.Files {
		if name != "log.txt" {
			t.Errorf("the module wrote %s", name)
		}
	}
	if !out[1].Skipped || !out[3].Skipped {
		t.Errorf("png %+v, empty %+v: want declined by Check", out[1], out[3])
	}
	if b := out[2]; !b.Ran || b.Err != "" || len(b.Fields) != 0 || b.Content != nil {
		t.Errorf("binary .txt: %+v; want a run with nothing to add", b)
	}
}
