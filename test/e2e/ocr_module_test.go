package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/modules/ocr/ocrtest"
	"github.com/homeindex/homeindex/protocol"
)

// The OCR module through the daemon, on both search backends: a word that exists only in a
// scan's pixels is found by `homeindexd search`, and the document records the pages read.
func TestOCRModule(t *testing.T) {
	t.Parallel()
	img, err := ocrtest.Render(ocrtest.Page{Text: "Receipt from the harbour cafe. One quokka biscuit and a pot of tea, four pounds twenty."})
	if err != nil {
		t.Fatal(err)
	}
	var scan bytes.Buffer
	if err := png.Encode(&scan, img); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"embedded", "meilisearch"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var opts []stackOption
			if backend == "meilisearch" {
				opts = append(opts, withMeili())
			}
			s := newStack(t, []module{{Name: "ocr", UID: "ocr1"}}, opts...)
			receipt := s.write("scans/receipt.png", scan.String())
			other := s.write("docs/menu.txt", "tea, coffee and biscuits")
			s.Daemon.Start()
			s.startModule("ocr", moduleBinary(t, "ocr-module"), "ocr", "TIMEOUT", "120")

			waitUntil(t, 150*time.Second, "the scan read", s.docsDone([]string{receipt, other}, func(d protocol.Document) error {
				if d.ID != receipt {
					return nil
				}
				var rec struct {
					Pages, Words int
					Languages    []string
				}
				if err := json.Unmarshal(d.Fields["ocr"], &rec); err != nil || rec.Pages != 1 || rec.Words < 10 || len(rec.Languages) != 1 {
					return fmt.Errorf("ocr field %s (%v)", d.Fields["ocr"], err)
				}
				return nil
			}))
			// The word is in the search index's content chunks, on page 1, for the receipt only.
			waitUntil(t, 30*time.Second, "quokka in the indexed content", func() error {
				return s.withIndex(func(idx search.Index) error {
					res, err := idx.Chunks().Search(context.Background(), search.Query{Q: "quokka", Limit: 10})
					if err != nil {
						return err
					}
					if len(res.Hits) != 1 {
						return fmt.Errorf("%d chunks hold quokka, want 1", len(res.Hits))
					}
					var c struct {
						FileID string `json:"file_id"`
						Module string
						Page   int
					}
					if err := json.Unmarshal(res.Hits[0], &c); err != nil || c.FileID != receipt || c.Module != "ocr" || c.Page != 1 {
						return fmt.Errorf("chunk %s (%v)", res.Hits[0], err)
					}
					return nil
				})
			})
			// Nothing in the file's name or fields says quokka: only the pixels do, and
			// `homeindexd search` finds the receipt by it.
			waitUntil(t, 30*time.Second, "homeindexd search quokka finds the receipt", func() error {
				hits, err := s.searchCLI("", "quokka")
				if err != nil {
					return err
				}
				if len(hits) != 1 || hits[0].ID != receipt {
					return fmt.Errorf("search quokka: %d hits, want the receipt alone", len(hits))
				}
				return nil
			})
		})
	}
}
