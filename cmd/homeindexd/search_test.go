package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

// TestSearchCLIFacetsSayWhichDrivesAreOnline: --facets marks each drive value online or
// offline from the catalog's drive registry, as /api/search does, in text and in JSON.
func TestSearchCLIFacetsSayWhichDrivesAreOnline(t *testing.T) {
	d := newDaemonEnv(t)
	d.write("notes/letter.txt", "a letter")
	d.write("archive/usb1/letter-copy.txt", "another letter")
	d.write("archive/usb2/letter-old.txt", "an old letter")
	if _, stderr, code := d.run("sync"); code != 0 {
		t.Fatalf("sync exit %d: %s", code, stderr)
	}
	// Unplug usb2: an empty mount point is an absent drive.
	if err := os.Remove(filepath.Join(d.files(), "archive", "usb2", "letter-old.txt")); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := d.run("sync"); code != 0 {
		t.Fatalf("second sync exit %d: %s", code, stderr)
	}
	const want = "drive: local (1, online), usb1 (1, online), usb2 (1, offline)"
	out, stderr, code := d.run("search", "letter", "--facets")
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d, want %q in:\n%s%s", code, want, out, stderr)
	}
	// Beside the running daemon, which holds the catalog open for writing, the same.
	c := d.cmd(context.Background(), "run")
	w := watchLogs(c)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, 60*time.Second, "the daemon's first sync", func() bool { return w.count("completed file sync") >= 1 })
	out, stderr, code = d.run("search", "letter", "--facets")
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("beside the daemon: exit %d, want %q in:\n%s%s", code, want, out, stderr)
	}
	if err := c.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("daemon exit: %v", err)
	}
	if !strings.Contains(out, "kind: text (3)\n") {
		t.Errorf("facets other than drive carry no state:\n%s", out)
	}
	out, _, code = d.run("search", "letter", "--facets", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last struct {
		Facets map[string][]search.FacetCount
	}
	if code != 0 || json.Unmarshal([]byte(lines[len(lines)-1]), &last) != nil {
		t.Fatalf("json: exit %d\n%s", code, out)
	}
	got := map[string]bool{}
	for _, c := range last.Facets["drive"] {
		got[c.Value] = c.Online != nil && *c.Online
		if c.Online == nil {
			t.Errorf("drive %s: no online state", c.Value)
		}
	}
	if want := map[string]bool{"local": true, "usb1": true, "usb2": false}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("online by drive %v, want %v", got, want)
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
