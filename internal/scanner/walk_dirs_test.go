package scanner

import (
	"os"
	"path/filepath"
	"testing"
)

// OnDir reports each directory read, the root as "", with its entries not skipped: an
// emptied directory (a failed mount) shows as 0.
func TestWalkOnDirCountsEntries(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"empty", "full/sub", "onlyskipped/meta"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"full/a.txt", "full/sub/b.txt", "top.txt"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]int{}
	walkAll(t, root, WalkOptions{
		Skip:  func(rel string, isDir bool) bool { return rel == "onlyskipped/meta" },
		OnDir: func(rel string, n int) { got[rel] = n },
	})
	want := map[string]int{"": 4, "empty": 0, "full": 2, "full/sub": 1, "onlyskipped": 0}
	if len(got) != len(want) {
		t.Fatalf("OnDir saw %v, want %v", got, want)
	}
	for d, n := range want {
		if got[d] != n {
			t.Errorf("%q: %d entries, want %d (all: %v)", d, got[d], n, got)
		}
	}
}
