package metadata

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

func TestLinkIsRelativeAndSurvivesMove(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	s, err := Open(filepath.Join(base, "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	mustWriteDocument(t, s, "abc", `{"id":"abc"}`)
	mustLink(t, s, "top.txt", "abc")
	mustLink(t, s, "archive/drive1/dir/foo.txt", "abc")

	for rel, want := range map[string]string{
		"top.txt":                    "../by-id/abc",
		"archive/drive1/dir/foo.txt": "../../../../by-id/abc",
	} {
		got, err := os.Readlink(filepath.Join(s.Root(), "by-path", filepath.FromSlash(rel)))
		if err != nil || got != want {
			t.Errorf("Readlink(%s): got (%q, %v), want %q", rel, got, err, want)
		}
	}

	moved := filepath.Join(base, "elsewhere", "meta")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(s.Root(), moved); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"top.txt", "archive/drive1/dir/foo.txt"} {
		b, err := os.ReadFile(filepath.Join(moved, "by-path", filepath.FromSlash(rel), "document.json"))
		if err != nil {
			t.Errorf("resolve %s after move: %v", rel, err)
		} else if string(b) != "{\n    \"id\": \"abc\"\n}\n" {
			t.Errorf("resolve %s after move: got %q", rel, b)
		}
	}
	s2, err := Open(moved)
	if err != nil {
		t.Fatal(err)
	}
	if id, ok, err := s2.LinkTarget("archive/drive1/dir/foo.txt"); err != nil || !ok || id != "abc" {
		t.Errorf("LinkTarget after move: got (%q, %v, %v), want (abc, true, nil)", id, ok, err)
	}
}

func TestLinkReplacesAndIsIdempotent(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	mustLink(t, s, "a/b.txt", "first")
	p := filepath.Join(s.Root(), "by-path", "a", "b.txt")
	before, _ := os.Lstat(p)

	mustLink(t, s, "a/b.txt", "first")
	after, _ := os.Lstat(p)
	if !os.SameFile(before, after) {
		t.Error("Link to the same id replaced the link")
	}

	mustLink(t, s, "a/b.txt", "second")
	if id, ok, err := s.LinkTarget("a/b.txt"); err != nil || !ok || id != "second" {
		t.Errorf("LinkTarget: got (%q, %v, %v), want (second, true, nil)", id, ok, err)
	}
	if target, _ := os.Readlink(p); target != "../../by-id/second" {
		t.Errorf("target: got %q", target)
	}
	if names := tmpEntries(t, s); len(names) != 0 {
		t.Errorf("temp links left: %v", names)
	}
}

// A path that was a file and is now a directory (or the reverse) leaves a stale entry in the
// way; Link replaces it instead of following or failing.
func TestLinkReplacesStaleEntries(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	mustWriteDocument(t, s, "doc", `{"id":"doc"}`)

	// "x" was a file, now it is a directory holding "y".
	mustLink(t, s, "x", "doc")
	mustLink(t, s, "x/y", "other")
	if exists(filepath.Join(s.DocumentDir("doc"), "y")) {
		t.Fatal("Link followed a stale parent link into by-id")
	}
	if id, ok, _ := s.LinkTarget("x/y"); !ok || id != "other" {
		t.Errorf("x/y: got (%q, %v), want (other, true)", id, ok)
	}

	// "x" is a file again.
	mustLink(t, s, "x", "doc")
	if id, ok, _ := s.LinkTarget("x"); !ok || id != "doc" {
		t.Errorf("x: got (%q, %v), want (doc, true)", id, ok)
	}
	// The stale x/y now reads through the link x: it must be neither found nor removed.
	if _, ok, _ := s.LinkTarget("x/y"); ok {
		t.Error("LinkTarget looked through a symlinked parent")
	}
	if err := s.Unlink("x/document.json"); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(s.DocumentDir("doc"), "document.json")) {
		t.Fatal("Unlink removed a file through a symlinked parent")
	}
}

func TestUnlinkPrunesEmptyParents(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	byPath := filepath.Join(s.Root(), "by-path")
	mustLink(t, s, "a/b/c.txt", "abc")
	mustLink(t, s, "a/d.txt", "abc")

	if err := s.Unlink("a/b/c.txt"); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(byPath, "a", "b")) {
		t.Error("empty a/b not pruned")
	}
	if !exists(filepath.Join(byPath, "a", "d.txt")) {
		t.Error("sibling link removed")
	}

	if err := s.Unlink("a/d.txt"); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(byPath, "a")) {
		t.Error("empty a not pruned")
	}
	if !exists(byPath) {
		t.Fatal("by-path itself was removed")
	}

	for _, rel := range []string{"a/d.txt", "missing", "no/such/dir/x"} {
		if err := s.Unlink(rel); err != nil {
			t.Errorf("Unlink(%q) of a missing link: %v", rel, err)
		}
	}

	// A crash between removing the link and pruning leaves empty parents; Unlink cleans them.
	if err := os.MkdirAll(filepath.Join(byPath, "p", "q"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Unlink("p/q/gone.txt"); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(byPath, "p")) {
		t.Error("empty parents of a missing link not pruned")
	}
}

func TestLinkTarget(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	byPath := filepath.Join(s.Root(), "by-path")
	mustLink(t, s, "a/b.txt", "abc")
	if err := os.Symlink("/etc", filepath.Join(byPath, "foreign")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(s.Root(), "by-id", "absid"), filepath.Join(byPath, "absolute")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rel    string
		wantID string
		wantOK bool
	}{
		{"a/b.txt", "abc", true},
		{"a", "", false}, // a directory, not a link
		{"missing", "", false},
		{"foreign", "", true},
		{"absolute", "absid", true},
	} {
		id, ok, err := s.LinkTarget(tc.rel)
		if err != nil || id != tc.wantID || ok != tc.wantOK {
			t.Errorf("LinkTarget(%q): got (%q, %v, %v), want (%q, %v, nil)", tc.rel, id, ok, err, tc.wantID, tc.wantOK)
		}
	}
}

func TestLinksAndDocumentIDs(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	mustWriteDocument(t, s, "aaa", `{"id":"aaa"}`)
	mustWriteDocument(t, s, "bbb", `{"id":"bbb"}`)
	if _, err := s.ModuleDir("ccc", "read"); err != nil { // module output, no document
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(s.Root(), "by-id", "bad.name"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Root(), "by-id", "bad.name", "document.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustLink(t, s, "x.txt", "aaa")
	mustLink(t, s, "d/y.txt", "bbb")
	mustLink(t, s, "d/e/z.txt", "aaa")
	if err := os.Symlink("/nowhere", filepath.Join(s.Root(), "by-path", "d", "foreign")); err != nil {
		t.Fatal(err)
	}

	var ids []string
	if err := s.DocumentIDs(func(id string) error { ids = append(ids, id); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if want := []string{"aaa", "bbb"}; !slices.Equal(ids, want) {
		t.Errorf("DocumentIDs: got %v, want %v", ids, want)
	}

	var links []string
	if err := s.Links(func(rel, id string) error { links = append(links, rel+"="+id); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"d/e/z.txt=aaa", "d/foreign=", "d/y.txt=bbb", "x.txt=aaa"}; !slices.Equal(links, want) {
		t.Errorf("Links: got %v, want %v", links, want)
	}

	stop := fmt.Errorf("stop")
	n := 0
	if err := s.Links(func(string, string) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Links with a failing fn: got (%v, %d calls), want (stop, 1)", err, n)
	}
	n = 0
	if err := s.DocumentIDs(func(string) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("DocumentIDs with a failing fn: got (%v, %d calls), want (stop, 1)", err, n)
	}
}

// Link and Unlink of siblings race on their shared parent: Unlink may prune the directory Link
// just created. Every Link must still succeed and end with its link in place.
func TestLinkUnlinkSiblingsConcurrently(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, name := range []string{"a", "b"} {
		wg.Go(func() {
			for i := range 50 {
				rel := fmt.Sprintf("shared/dir/%s", name)
				if err := s.Link(rel, fmt.Sprintf("id%d", i)); err != nil {
					errs <- err
					return
				}
				if err := s.Unlink(rel); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if exists(filepath.Join(s.Root(), "by-path", "shared")) {
		t.Error("empty parents left after all links were removed")
	}
}

// Links made one after another in one directory check its parents once; a removal that prunes
// directories makes the next link build them again, and a parent that became a directory of
// links where a link stood is handled too.
func TestLinkAfterPruneRebuildsParents(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	mustLink(t, s, "a/b/one.txt", "id1")
	mustLink(t, s, "a/b/two.txt", "id2")
	if err := s.Unlink("a/b/one.txt"); err != nil {
		t.Fatal(err)
	}
	if err := s.Unlink("a/b/two.txt"); err != nil { // prunes a/b and a
		t.Fatal(err)
	}
	if exists(filepath.Join(s.Root(), "by-path", "a")) {
		t.Fatal("by-path/a not pruned")
	}
	mustLink(t, s, "a/b/three.txt", "id3")
	mustLink(t, s, "x", "id4")
	mustLink(t, s, "x/y.txt", "id5") // x was a link: it becomes a directory
	for rel, id := range map[string]string{"a/b/three.txt": "id3", "x/y.txt": "id5"} {
		if got, ok, err := s.LinkTarget(rel); err != nil || !ok || got != id {
			t.Errorf("LinkTarget(%s) = %q, %v, %v; want %s", rel, got, ok, err, id)
		}
	}
}
