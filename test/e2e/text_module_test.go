package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The text module end to end, on both search backends: homeindexd, redis-server and
// text-module on a tree holding a PDF printed by headless Chromium and a DOCX written by
// python3-docx. A word found only inside the PDF, and one only inside the DOCX, find their
// files through `homeindexd search`; the module's fields are filterable.
func TestTextModuleFindsWordsInsidePDFAndDOCX(t *testing.T) {
	t.Parallel()
	pdf, docx := textModuleFixtures(t)
	for _, tc := range []struct {
		backend string
		opts    []stackOption
	}{
		{"embedded", nil},
		{"meilisearch", []stackOption{withMeili()}},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			t.Parallel()
			s := newStack(t, []module{{Name: "text", UID: "text-e2e", Filterable: []string{"text.format", "text.pages"}}}, tc.opts...)
			copyFile(t, pdf, filepath.Join(s.Files, "docs", "report.pdf"))
			copyFile(t, docx, filepath.Join(s.Files, "archive", "usb", "letters", "letter.docx"))
			s.write("docs/notes.txt", "plain notes without the special words")
			s.Daemon.Start()
			s.startModule("text", bin.text, "text")
			for word, want := range map[string]string{"wombatpdfword": "docs/report.pdf", "quokkadocxword": "archive/usb/letters/letter.docx"} {
				waitUntil(t, 120*time.Second, "a search for "+word+" to find "+want, func() error {
					hits, err := s.searchCLI("", word)
					if err != nil {
						return err
					}
					if len(hits) != 1 || len(hits[0].Paths) == 0 || hits[0].Paths[0].Path != want {
						return fmt.Errorf("hits %+v", hits)
					}
					return nil
				})
			}
			hits, err := s.searchCLI(`text.format = "pdf" AND text.pages = 2`, "")
			if err != nil || len(hits) != 1 || hits[0].Paths[0].Path != "docs/report.pdf" {
				t.Errorf("filter on text.format and text.pages: %+v, %v", hits, err)
			}
			if hits, err := s.searchCLI("", "scriptonlyword"); err != nil || len(hits) != 0 {
				t.Errorf("a word only in the page's script found %+v, %v", hits, err)
			}
		})
	}
}

// textModuleFixtures prints a 2-page PDF with Chromium and writes a DOCX with python3-docx,
// outside any indexed tree, and returns their paths.
func textModuleFixtures(t *testing.T) (pdf, docx string) {
	t.Helper()
	dir := t.TempDir()
	page := filepath.Join(dir, "page.html")
	writeFile(t, page, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Field report</title>
<script>var x = "scriptonlyword";</script></head><body><p>The first page of the field report.</p>
<p style="page-break-before:always">The second page names the wombatpdfword.</p></body></html>`)
	pdf = filepath.Join(dir, "report.pdf")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromiumBin, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--no-pdf-header-footer", "--print-to-pdf="+pdf, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --print-to-pdf (make deps installs it): %v\n%s", err, out)
	}
	docx = filepath.Join(dir, "letter.docx")
	script := `import sys, docx
d = docx.Document(); d.core_properties.title = "A letter"
d.add_paragraph("Dear reader, the quokkadocxword is in this letter only.")
d.save(sys.argv[1])`
	if out, err := exec.Command("/usr/bin/python3", "-c", script, docx).CombinedOutput(); err != nil {
		t.Fatalf("python3-docx (make deps installs it): %v\n%s", err, out)
	}
	return pdf, docx
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(b))
}
