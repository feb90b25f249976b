package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestTextAndMediaModulesOnAMixedTree chains the text and media modules, as a user runs them,
// over one tree of documents and photos, on both search backends: words found only inside the
// PDF and only inside the DOCX find their files, and photos filter by camera and by a July
// 2019 date range and sort newest first.
func TestTextAndMediaModulesOnAMixedTree(t *testing.T) {
	t.Parallel()
	pdf, docx := textModuleFixtures(t)
	const modulesYAML = `- name: text
  uid: "t1"
  filterable_attributes: [text.format]
- name: media
  uid: "m1"
  filterable_attributes: [media.kind, media.camera, media.date_unix]
  sortable_attributes: [media.date_unix]
`
	for _, backend := range []string{"embedded", "meilisearch"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			opts := []stackOption{withDaemonEnv("MODULES", modulesYAML)}
			if backend == "meilisearch" {
				opts = append(opts, withMeili())
			}
			s := newStack(t, []module{{Name: "text", UID: "t1"}, {Name: "media", UID: "m1"}}, opts...)
			copyFile(t, pdf, filepath.Join(s.Files, "docs", "report.pdf"))
			copyFile(t, docx, filepath.Join(s.Files, "archive", "usb", "letter.docx"))
			mediaPhoto(t, s.Files+"/photos/july.jpg", 3, "-Make=Canon", "-Model=Canon EOS 5D Mark IV",
				"-DateTimeOriginal=2019:07:14 15:04:05", "-OffsetTimeOriginal=+02:00")
			mediaPhoto(t, s.Files+"/photos/late-july.jpg", 5, "-Make=Google", "-Model=Pixel 7",
				"-DateTimeOriginal=2019:07:30 09:00:00")
			mediaPhoto(t, s.Files+"/photos/august.jpg", 7, "-Make=Canon", "-Model=Canon EOS 5D Mark IV",
				"-DateTimeOriginal=2019:08:02 10:00:00")
			s.Daemon.Start()
			s.startModule("text", bin.text, "text")
			s.startModule("media", moduleBinary(t, "media-module"), "media")

			for word, want := range map[string]string{"wombatpdfword": "report.pdf", "quokkadocxword": "letter.docx"} {
				waitUntil(t, 120*time.Second, "a search for "+word, func() error {
					hits, err := s.searchCLI("", word)
					if err != nil {
						return err
					}
					if got := hitNames(hits); !slices.Equal(got, []string{want}) {
						return fmt.Errorf("hits %v, want [%s]", got, want)
					}
					return nil
				})
			}
			check := func(what, filter string, want []string, sort ...string) {
				waitUntil(t, 120*time.Second, what, func() error {
					args := []string{"search", "--json", "--limit", "100", "--filter", filter}
					for _, s := range sort {
						args = append(args, "--sort", s)
					}
					hits, err := s.searchCLIArgs(args...)
					if err != nil {
						return err
					}
					if got := hitNames(hits); !slices.Equal(got, want) {
						return fmt.Errorf("%s: %v, want %v", filter, got, want)
					}
					return nil
				})
			}
			check("photos by camera", `media.camera = "Canon EOS 5D Mark IV"`, []string{"august.jpg", "july.jpg"}, "media.date_unix:desc")
			// July 2019 (UTC): 1561939200 <= date_unix < 1564617600.
			check("photos from July 2019, newest first", `media.kind = photo AND media.date_unix >= 1561939200 AND media.date_unix < 1564617600`,
				[]string{"late-july.jpg", "july.jpg"}, "media.date_unix:desc")
			check("documents by the text module's format", `text.format = "pdf"`, []string{"report.pdf"})
		})
	}
}
