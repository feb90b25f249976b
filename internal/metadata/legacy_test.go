package metadata

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/homeindex/homeindex/protocol"
)

func TestLegacyDocuments(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	byID := filepath.Join(s.Root(), "by-id")
	write := func(dir, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(byID, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(byID, dir, "document.json"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// As the Python implementation wrote it: indent 4, ", " separators, uid persisted.
	write("hash1", `{
    "id": "hash1", 
    "paths": {
        "archive/drive1/foo.txt": 1.0
    }, 
    "paths_list": [
        "archive/drive1/foo.txt"
    ], 
    "mtime": 1.0, 
    "size": 1, 
    "type": "text/plain", 
    "copies": 1, 
    "version": 1, 
    "next": "read", 
    "uid": "u1", 
    "read.content": "old text", 
    "read": {"text": "hi"}
}`)
	write("badjson", `{"id": "badjson",`)
	write("mismatch", `{"id": "other"}`)
	write("noid", `{"paths": {}}`)
	write("badtype", `{"id": "badtype", "size": "big"}`)
	write("bad.name", `{"id": "bad.name"}`)
	if err := os.WriteFile(filepath.Join(byID, "plainfile"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ModuleDir("modonly", "read"); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s.Root())

	var docs []protocol.Document
	bad := map[string]error{}
	err := s.LegacyDocuments(func(d protocol.Document) error {
		docs = append(docs, d)
		return nil
	}, func(p string, err error) {
		rel, _ := filepath.Rel(byID, p)
		bad[filepath.ToSlash(rel)] = err
	})
	if err != nil {
		t.Fatalf("LegacyDocuments: %v", err)
	}

	if len(docs) != 1 {
		t.Fatalf("got %d documents, want 1: %+v", len(docs), docs)
	}
	d := docs[0]
	if d.ID != "hash1" || d.Next != "read" || d.Size != 1 || d.Type != "text/plain" || d.Version != 1 {
		t.Errorf("core fields: got %+v", d)
	}
	if want := (protocol.Paths{{Path: "archive/drive1/foo.txt", Mtime: 1}}); !slices.Equal(d.Paths, want) {
		t.Errorf("paths: got %v, want %v", d.Paths, want)
	}
	var keys []string
	for k := range d.Fields {
		keys = append(keys, k)
	}
	if want := []string{"read"}; !slices.Equal(keys, want) {
		t.Errorf("module fields: got %v, want %v (no uid, no .content)", keys, want)
	}
	var read struct{ Text string }
	if err := json.Unmarshal(d.Fields["read"], &read); err != nil || read.Text != "hi" {
		t.Errorf("read field: got %s", d.Fields["read"])
	}

	wantBad := map[string]error{
		"badjson/document.json":  nil,
		"mismatch/document.json": ErrIDMismatch,
		"noid/document.json":     ErrIDMismatch,
		"badtype/document.json":  nil,
		"bad.name":               ErrInvalidID,
		"plainfile":              ErrNotDirectory,
	}
	for p, sentinel := range wantBad {
		err, ok := bad[p]
		switch {
		case !ok:
			t.Errorf("%s: not reported", p)
		case sentinel != nil && !errors.Is(err, sentinel):
			t.Errorf("%s: got %v, want %v", p, err, sentinel)
		case err == nil:
			t.Errorf("%s: reported with a nil error", p)
		}
	}
	for p, err := range bad {
		if _, ok := wantBad[p]; !ok {
			t.Errorf("%s: unexpectedly reported: %v", p, err)
		}
	}
	// Bad files are reported, never deleted.
	diffSnapshots(t, snapshot(t, s.Root()), before)

	if err := s.LegacyDocuments(func(protocol.Document) error { return nil }, nil); err != nil {
		t.Errorf("nil onBad: %v", err)
	}
	stop := errors.New("stop")
	if err := s.LegacyDocuments(func(protocol.Document) error { return stop }, nil); err != stop {
		t.Errorf("failing fn: got %v, want stop", err)
	}
}
