package metadata

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"0123456789abcdef", true},
		{"hash1", true},
		{"A_b-9", true},
		{strings.Repeat("a", 511), true},
		{strings.Repeat("a", 512), false},
		{"", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"a/b", false},
		{"a\x00b", false},
		{"a b", false},
		{"a.b", false},
		{"é", false},
	} {
		if got := ValidID(tc.id); got != tc.want {
			t.Errorf("ValidID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

func TestValidModuleName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"read", true},
		{"0cr", true},
		{"text-read_2", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{"-read", false},
		{"_read", false},
		{"Read", false},
		{"re.ad", false},
		{"..", false},
		{"a/b", false},
		{"a\x00", false},
	} {
		if got := ValidModuleName(tc.name); got != tc.want {
			t.Errorf("ValidModuleName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestUnsafeNamesWriteNothing calls every method with unsafe ids, module names, file names and
// relative paths, and checks that each fails and that no file changed inside or outside the root.
func TestUnsafeNamesWriteNothing(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	s, err := Open(filepath.Join(base, "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "outside", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWriteDocument(t, s, "good", `{"id":"good"}`)
	before := snapshot(t, base)

	badIDs := []string{"", ".", "..", "../x", "../../outside/x", "a/b", "/abs", "a\x00b", "by-id/../x"}
	badModules := []string{"", ".", "..", "../x", "A", "a/b", "a\x00", "-x"}
	badNames := []string{"", ".", "..", "../x", "a/b", ".hidden", "a\x00"}
	badRels := []string{"", ".", "..", "../x", "a/../../x", "/abs", "a//b", "a/./b", "a/", "./a", "a\x00b", "a/.."}

	check := func(what string, err error, sentinel error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: got nil error", what)
		} else if !errors.Is(err, sentinel) {
			t.Errorf("%s: got %v, want %v", what, err, sentinel)
		}
	}
	for _, id := range badIDs {
		_, err := s.WriteDocument(id, []byte(`{"id":"x"}`))
		check("WriteDocument "+id, err, ErrInvalidID)
		_, err = s.ReadDocument(id)
		check("ReadDocument "+id, err, ErrInvalidID)
		check("RemoveDocument "+id, s.RemoveDocument(id), ErrInvalidID)
		_, err = s.ModuleDir(id, "read")
		check("ModuleDir "+id, err, ErrInvalidID)
		check("WriteModuleFile "+id, s.WriteModuleFile(id, "read", "content.json", []byte("1")), ErrInvalidID)
		check("Link "+id, s.Link("a/b.txt", id), ErrInvalidID)
		if d := s.DocumentDir(id); d != "" {
			t.Errorf("DocumentDir(%q) = %q, want \"\"", id, d)
		}
	}
	for _, m := range badModules {
		_, err := s.ModuleDir("good", m)
		check("ModuleDir "+m, err, ErrInvalidModule)
		check("WriteModuleFile "+m, s.WriteModuleFile("good", m, "content.json", []byte("1")), ErrInvalidModule)
	}
	for _, n := range badNames {
		check("WriteModuleFile "+n, s.WriteModuleFile("good", "read", n, []byte("1")), ErrInvalidName)
	}
	for _, rel := range badRels {
		check("Link "+rel, s.Link(rel, "good"), ErrInvalidPath)
		check("Unlink "+rel, s.Unlink(rel), ErrInvalidPath)
		_, _, err := s.LinkTarget(rel)
		check("LinkTarget "+rel, err, ErrInvalidPath)
	}
	diffSnapshots(t, snapshot(t, base), before)
}

// A symlink planted where a document directory should be must not be written through.
func TestPlantedSymlinkNotFollowed(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	s, err := Open(filepath.Join(base, "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.Root(), "by-id", "evil")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteDocument("evil", []byte(`{"id":"evil"}`)); err == nil {
		t.Error("WriteDocument through a symlink: got nil error")
	}
	if _, err := s.ModuleDir("evil", "read"); err == nil {
		t.Error("ModuleDir through a symlink: got nil error")
	}
	if err := s.RemoveDocument("evil"); err != nil {
		t.Errorf("RemoveDocument: %v", err)
	}
	diffSnapshots(t, snapshot(t, outside), map[string]string{".": "dir"})
}
