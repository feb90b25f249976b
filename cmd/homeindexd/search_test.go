package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/search"
)

// TestSearchCLIFlagsAfterWordsExactTotalsAndDeepPaging runs the built binary over 1,205
// matching files: flags work before and after the words, the total is exact, and paging
// past 1,000 reaches every hit.
func TestSearchCLIFlagsAfterWordsExactTotalsAndDeepPaging(t *testing.T) {
	d := newDaemonEnv(t)
	const n = 1205
	for i := range n {
		d.write(fmt.Sprintf("album/photo-%04d.txt", i), fmt.Sprintf("picture %d", i))
	}
	d.write("notes/other.txt", "nothing to see")
	if _, stderr, code := d.run("sync"); code != 0 {
		t.Fatalf("sync exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"search", "photo", "--limit", "2"},
		{"search", "--limit", "2", "photo"},
		{"search", "--limit=2", "photo", "--sort", "name"},
	} {
		out, stderr, code := d.run(args...)
		if code != 0 || !strings.HasPrefix(out, fmt.Sprintf("%d hits (1-2 shown)\n", n)) {
			t.Errorf("%v: exit %d, output %q %s", args, code, out, stderr)
		}
		if got := strings.Count(out, "album/photo-"); got != 2 {
			t.Errorf("%v: %d blocks, want 2:\n%s", args, got, out)
		}
	}
	out, _, code := d.run("search", "photo", "--sort", "name", "--offset", "1200", "--limit", "10")
	if code != 0 || !strings.Contains(out, "album/photo-1204.txt") || strings.Count(out, "album/photo-") != 5 {
		t.Errorf("last page: exit %d\n%s", code, out)
	}
	seen := map[string]bool{}
	for offset := 0; ; offset += search.MaxLimit {
		out, stderr, code := d.run("search", "--json", "photo", "--limit", fmt.Sprint(search.MaxLimit), "--offset", fmt.Sprint(offset), "--sort", "name")
		if code != 0 {
			t.Fatalf("offset %d: exit %d %s", offset, code, stderr)
		}
		lines := strings.Fields(out)
		for _, l := range lines {
			var doc struct{ ID string }
			if err := json.Unmarshal([]byte(l), &doc); err != nil || doc.ID == "" {
				t.Fatalf("line %q: %v", l, err)
			}
			seen[doc.ID] = true
		}
		if len(lines) < search.MaxLimit {
			break
		}
	}
	if len(seen) != n {
		t.Errorf("paging reached %d distinct hits, want %d", len(seen), n)
	}
	if out, _, code := d.run("search", "--", "--limit"); code != 0 || !strings.HasPrefix(out, "0 hits") {
		t.Errorf("-- ends flags: exit %d %q", code, out)
	}
	out, _, code = d.run("search", "photo", "--limit", "1", "--facets")
	if code != 0 || !strings.Contains(out, "kind: text (1205)") || !strings.Contains(out, "extension: txt (1205)") {
		t.Errorf("facets: exit %d\n%s", code, out)
	}
}

// TestSearchCLIMissingOrEmptyIndex: no index, or an empty one, is an error naming
// STATE_DIRECTORY, and nothing is created.
func TestSearchCLIMissingOrEmptyIndex(t *testing.T) {
	d := newDaemonEnv(t)
	state := d.vars["STATE_DIRECTORY"]
	_, stderr, code := d.run("search", "anything")
	if code != 1 || !strings.Contains(stderr, "STATE_DIRECTORY="+state) {
		t.Errorf("missing index: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state directory created by search: %v", err)
	}
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	ix, err := search.OpenEmbedded(filepath.Join(state, "search.db"))
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	_, stderr, code = d.run("search", "anything")
	if code != 1 || !strings.Contains(stderr, "empty") || !strings.Contains(stderr, "STATE_DIRECTORY="+state) {
		t.Errorf("empty index: exit %d, stderr %q", code, stderr)
	}
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 KB", 1234567: "1.2 MB", 25_000_000_000: "25 GB", 3e15: "3000 TB"} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
}
