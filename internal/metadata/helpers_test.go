package metadata

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func openStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "metadata"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// snapshot describes every entry below dir: directories as "dir", links as "-> target",
// files as their content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "-> " + target
		case d.IsDir():
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", dir, err)
	}
	return out
}

func diffSnapshots(t *testing.T, got, want map[string]string) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: missing, want %q", k, want[k])
		} else if g != want[k] {
			t.Errorf("%s: got %q, want %q", k, g, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected entry %q", k, got[k])
		}
	}
}

// tmpEntries lists the temp directory's entries but the spares (durable.Spares), which stay
// there between writes by design; at most maxSparesAfter of those are allowed.
func tmpEntries(t *testing.T, s *Store) []string {
	t.Helper()
	entries, err := os.ReadDir(s.tmpDir())
	if err != nil {
		t.Fatalf("read temp dir: %v", err)
	}
	var names []string
	spares := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "spare.") && e.Type().IsRegular() {
			spares++
			continue
		}
		names = append(names, e.Name())
	}
	if spares > maxSparesAfter {
		t.Errorf("%d spares in the temp directory, want at most %d", spares, maxSparesAfter)
	}
	return names
}

// maxSparesAfter is the most spares the tests' writers leave: one per concurrent writer.
const maxSparesAfter = 8

func mustWriteDocument(t *testing.T, s *Store, id, doc string) {
	t.Helper()
	if _, err := s.WriteDocument(id, []byte(doc)); err != nil {
		t.Fatalf("WriteDocument(%q): %v", id, err)
	}
}

func mustLink(t *testing.T, s *Store, rel, id string) {
	t.Helper()
	if err := s.Link(rel, id); err != nil {
		t.Fatalf("Link(%q, %q): %v", rel, id, err)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
