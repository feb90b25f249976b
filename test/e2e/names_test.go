package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/protocol"
)

// oddNames are file names the file system takes and UTF-8 does not: Latin-1, bytes that are
// never UTF-8, a newline, 255-byte names (NAME_MAX, once inside a directory whose name is not
// UTF-8 either), and one on an archive drive.
func oddNames() []string {
	long := strings.Repeat("\xe9", 251) + ".txt"
	if len(long) != 255 {
		panic("long name is not 255 bytes")
	}
	return []string{"caf\xe9.txt", "bad\xff\xfename.txt", "new\nline.txt", long, "d\xe9r/" + long,
		"archive/usb/caf\xe9 drive.txt"}
}

// Every name round-trips byte for byte: through the catalog, document.json, by-path, the
// queue items and done messages, and the search index, on both backends, and through both
// module runtimes: the Go SDK module and the module written for the upstream Python runtime
// each open the file the document names (the hash of what they read matches what the test
// wrote).
func TestOddNamesThroughBothModuleRuntimes(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"embedded", "meilisearch"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			testOddNames(t, backend == "meilisearch")
		})
	}
}

func testOddNames(t *testing.T, meili bool) {
	python := pythonWithRedis(t)
	const goMod, pyMod = "go-names", "py-names"
	opts := []stackOption{}
	if meili {
		opts = append(opts, withMeili())
	}
	s := newStack(t, []module{{Name: goMod, UID: "g1"}, {Name: pyMod, UID: "p1"}}, opts...)
	names := oddNames()
	ids := make([]string, len(names))
	sums := map[string]string{} // name → sha256 of its content
	for i, n := range names {
		content := fmt.Sprintf("content %d of an oddly named file", i)
		ids[i] = s.write(n, content)
		sum := sha256.Sum256([]byte(content))
		sums[n] = hex.EncodeToString(sum[:])
	}
	s.Daemon.Start()
	s.startModule("go", bin.example, goMod)
	py := newProc(t, s.Logs, "python", python, []string{filepath.Join(repoRoot, "test", "e2e", "testdata", "python_module.py")},
		map[string]string{"QUEUE_NAME": pyMod, "MODULE_UID": "p1", "REDIS_HOST": "http://" + s.Redis.Addr(), "TIMEOUT": "10",
			"FILES_DIRECTORY": s.Files, "METADATA_DIRECTORY": s.Meta, "WORKER_ID": "python",
			"RECORD_FILE": filepath.Join(s.Record, "python.jsonl")})
	py.Start()

	byID := map[string]string{}
	for i, id := range ids {
		byID[id] = names[i]
	}
	// document.json names each file exactly, and by-path/<exact name> leads to it.
	waitUntil(t, 90*time.Second, "every oddly named file through both modules", s.docsDone(ids, func(d protocol.Document) error {
		if err := noted(d); err != nil {
			return err
		}
		want := byID[d.ID]
		if len(d.Paths) != 1 || d.Paths[0].Path != want || len(d.PathsList) != 1 || d.PathsList[0] != want {
			return fmt.Errorf("paths %v / %q, want %q", d.Paths, d.PathsList, want)
		}
		link := filepath.Join(s.Meta, "by-path", filepath.FromSlash(want))
		target, err := os.Readlink(link)
		if err != nil {
			return fmt.Errorf("by-path link: %w", err)
		}
		if filepath.Base(target) != d.ID {
			return fmt.Errorf("by-path link points at %q", target)
		}
		if _, err := os.Stat(filepath.Join(link, "document.json")); err != nil {
			return fmt.Errorf("by-path link does not lead to document.json: %w", err)
		}
		return nil
	}))

	// Each runtime opened the right file: the hash of what it read is the hash of what we wrote.
	for _, mod := range []string{goMod, pyMod} {
		runs := s.records().runs().module(mod)
		for _, n := range names {
			var got []string
			for _, r := range runs {
				if r.Path == n {
					got = append(got, r.SHA256)
				}
			}
			if len(got) != 1 || got[0] != sums[n] {
				t.Errorf("%s read %q as %q, want one run reading %s (runs: %v)", mod, n, got, sums[n], runs)
			}
		}
	}

	// The index finds them, and every hit gives back the exact name.
	waitUntil(t, 30*time.Second, "every oddly named file searchable with its exact name", func() error {
		return s.withIndex(func(idx search.Index) error {
			for q, want := range map[string][]string{"": ids, "caf": {ids[0], ids[5]}, "line": {ids[2]}, "drive": {ids[5]}} {
				res, err := idx.Files().Search(context.Background(), search.Query{Q: q, Limit: 100})
				if err != nil {
					return err
				}
				found := map[string]bool{}
				for _, h := range res.Hits {
					var d protocol.Document
					if err := json.Unmarshal(h, &d); err != nil {
						return err
					}
					if err := noted(d); err != nil {
						return fmt.Errorf("hit %s: %w", d.ID, err)
					}
					if len(d.Paths) != 1 || d.Paths[0].Path != byID[d.ID] {
						return fmt.Errorf("hit %s names %v, want %q", d.ID, d.Paths, byID[d.ID])
					}
					if _, ok := d.Fields[search.FieldPathsExact]; ok {
						return errors.New("a hit carries " + search.FieldPathsExact)
					}
					found[d.ID] = true
				}
				for _, id := range want {
					if !found[id] {
						return fmt.Errorf("query %q: %q not found (%d hits)", q, byID[id], len(res.Hits))
					}
				}
			}
			return nil
		})
	})

	// The command line shows one line per hit, however the name is made.
	out, errOut, code := s.cli("search", "line")
	if code != 0 || !strings.Contains(out, `new\nline.txt`) {
		t.Errorf("homeindexd search line: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "line.txt") {
			t.Errorf("a name's newline split a line of search output: %q", out)
		}
	}
	py.Stop()
}
