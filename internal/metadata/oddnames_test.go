package metadata

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/protocol"
)

// Names are bytes: by-path links, document.json and module files keep names that are not UTF-8,
// hold newlines or fill NAME_MAX, exactly.
func TestOddNamesKeepTheirBytes(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	long := strings.Repeat("\xe9", 251) + ".txt"
	rels := []string{"caf\xe9.txt", "bad\xff\xfename.txt", "new\nline.txt", "d\xe9r/" + long, long}
	const id = "0123456789abcdef"
	doc := protocol.Document{ID: id}
	for i, rel := range rels {
		if err := s.Link(rel, id); err != nil {
			t.Fatalf("Link(%q): %v", rel, err)
		}
		doc.Paths = append(doc.Paths, protocol.PathEntry{Path: rel, Mtime: float64(i)})
		doc.PathsList = append(doc.PathsList, rel)
	}
	got := map[string]string{}
	if err := s.Links(func(rel, id string) error { got[rel] = id; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, rel := range rels {
		if got[rel] != id {
			t.Errorf("link %q: %q, want %q (links %q)", rel, got[rel], id, got)
		}
	}
	b, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteDocument(id, b); err != nil {
		t.Fatal(err)
	}
	for _, rel := range rels {
		if _, err := os.Stat(filepath.Join(s.Root(), "by-path", rel, "document.json")); err != nil {
			t.Errorf("by-path/%q does not lead to document.json: %v", rel, err)
		}
	}
	raw, err := s.ReadDocument(id)
	if err != nil {
		t.Fatal(err)
	}
	var back protocol.Document
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	for i, rel := range rels {
		if back.Paths[i].Path != rel || back.PathsList[i] != rel {
			t.Errorf("document.json path %d = %q, want %q", i, back.Paths[i].Path, rel)
		}
	}
	// A module file may have a 255-byte name: the temp name must still fit.
	if err := s.WriteModuleFile(id, "mod", long, []byte("x")); err != nil {
		t.Fatalf("module file with a %d-byte name: %v", len(long), err)
	}
	for _, rel := range rels {
		if err := s.Unlink(rel); err != nil {
			t.Errorf("Unlink(%q): %v", rel, err)
		}
	}
}
