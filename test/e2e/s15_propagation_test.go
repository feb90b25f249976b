package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/search"
)

// Scenario 15, update propagation, on both search backends: the module's output (note "hello",
// content "hello world") reaches document.json, the files index and the chunk index at once
// (from the merge, with no further sync or retry), and content.json and chunks.json are
// written beside it.
func TestS15ModuleOutputReachesEveryStore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		backend string
		// maxLag bounds the time between the first and the last of the three stores showing a
		// result. On Meilisearch one outbox round awaits one delete and one upsert task per
		// merged result in turn, before writing document.json; a task takes 0.05 to 3 s on
		// this machine, hence the wider bound (see the report on internal/outbox).
		maxLag time.Duration
		opts   []stackOption
	}{
		{"embedded", 3 * time.Second, nil},
		{"meilisearch", 15 * time.Second, []stackOption{withMeili()}},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			t.Parallel()
			testPropagation(t, tc.maxLag, tc.opts...)
		})
	}
}

func testPropagation(t *testing.T, maxLag time.Duration, opts ...stackOption) {
	const mod = "example-module"
	s := newStack(t, []module{{Name: mod, UID: "e1", Filterable: []string{"note"}}}, opts...)
	ids := []string{s.write("docs/report.txt", "the quarterly report"), s.write("archive/usb/scan.txt", "a scanned page")}
	s.Daemon.Start()
	waitUntil(t, 30*time.Second, "the daemon's first sync", s.markerIs("usb", "pending"))
	s.startModule("example", bin.example, mod)

	type seen struct{ doc, files, chunks time.Time }
	first := map[string]*seen{}
	for _, id := range ids {
		first[id] = &seen{}
	}
	waitUntil(t, 60*time.Second, "the module's output in every store", func() error {
		var missing []string
		for _, id := range ids {
			f := first[id]
			now := time.Now()
			if f.doc.IsZero() {
				if d, err := s.doc(id); err == nil && d.Next == "" && noted(d) == nil {
					f.doc = now
				}
			}
			if err := s.withIndex(func(idx search.Index) error {
				if f.files.IsZero() {
					ok, err := indexedWithNote(idx, id)
					if err != nil {
						return err
					}
					if ok {
						f.files = now
					}
				}
				if f.chunks.IsZero() {
					hits, err := chunkHits(idx, id, "hello")
					if err != nil {
						return err
					}
					for _, h := range hits {
						if text, _ := h["text"].(string); strings.Contains(text, "hello world") && h["module"] == mod {
							f.chunks = now
						}
					}
				}
				return nil
			}); err != nil {
				return err
			}
			if f.doc.IsZero() || f.files.IsZero() || f.chunks.IsZero() {
				missing = append(missing, fmt.Sprintf("%s %+v", id, *f))
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("not everywhere yet: %v", missing)
		}
		return nil
	})
	for id, f := range first {
		earliest, latest := f.doc, f.doc
		for _, at := range []time.Time{f.files, f.chunks} {
			if at.Before(earliest) {
				earliest = at
			}
			if at.After(latest) {
				latest = at
			}
		}
		t.Logf("%s: document.json, files index and chunk index within %v", id, latest.Sub(earliest))
		if lag := latest.Sub(earliest); lag > maxLag {
			t.Fatalf("%s: document.json at %s, files index at %s, chunk index at %s: %v apart, want at most %v",
				id, f.doc.Format("15:04:05.000"), f.files.Format("15:04:05.000"), f.chunks.Format("15:04:05.000"), lag, maxLag)
		}
	}

	// The module's output on disk and through the command line (the module's filterable field).
	for _, id := range ids {
		if c, err := s.moduleFile(id, mod, "content.json"); err != nil || strings.TrimSpace(string(c)) != `"hello world"` {
			t.Fatalf("%s: content.json %q (%v)", id, c, err)
		}
		var chunks []map[string]any
		if b, err := s.moduleFile(id, mod, "chunks.json"); err != nil || json.Unmarshal(b, &chunks) != nil || len(chunks) == 0 {
			t.Fatalf("%s: chunks.json %q (%v)", id, b, err)
		}
	}
	hits, err := s.searchCLI(`note = "hello"`, "")
	if err != nil || len(hits) != len(ids) {
		t.Fatalf("search --filter 'note = \"hello\"': %d hits (%v), want %d", len(hits), err, len(ids))
	}
}

// indexedWithNote reports whether the files index holds id with note "hello" and next "".
func indexedWithNote(idx search.Index, id string) (bool, error) {
	res, err := idx.Files().Search(context.Background(), search.Query{Filter: fmt.Sprintf("id = %q", id), Limit: 1})
	if err != nil || len(res.Hits) == 0 {
		return false, err
	}
	var d struct {
		Note string  `json:"note"`
		Next *string `json:"next"`
	}
	if err := json.Unmarshal(res.Hits[0], &d); err != nil {
		return false, err
	}
	return d.Note == "hello" && d.Next != nil && *d.Next == "", nil
}
