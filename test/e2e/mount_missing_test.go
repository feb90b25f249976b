package e2e

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/ops"
)

// A failed mount is not a deletion: an emptied subdirectory, then an emptied files root (what
// an unmounted share looks like) keep every document indexed with its module output; status,
// the log and the metrics say which directory is held and why; when the files return nothing
// is new and no module runs again.
func TestMountEmptiedRootAndSubdirectoryDeleteNothing(t *testing.T) {
	t.Parallel()
	s := newStack(t, []module{{Name: "example-module", UID: "e1"}})
	ids := []string{s.write("top.txt", "top level"), s.write("nas/a.txt", "nas a"), s.write("nas/deep/b.txt", "nas deep b")}
	s.Daemon.Start()
	s.startModule("example", bin.example, "example-module")
	waitUntil(t, 60*time.Second, "every file through the chain", s.docsDone(ids, noted))

	// The share under nas/ goes away: its mount point stays, empty.
	aside := s.swapWithEmpty(t, filepath.Join(s.Files, "nas"))
	waitUntil(t, 30*time.Second, "nas held as empty", s.heldIs("nas:empty"))
	s.allIndexed(t, ids...)
	s.outputIntact(t, ids...)
	if d, err := s.doc(ids[2]); err != nil || len(d.PathsList) != 1 || d.PathsList[0] != "nas/deep/b.txt" {
		t.Fatalf("document of a held file: %+v %v", d, err)
	}
	if !strings.Contains(s.Daemon.Log(), "directory is empty; its indexed files are kept") {
		t.Error("no log line names the held directory")
	}
	swapBack(t, filepath.Join(s.Files, "nas"), aside)
	waitUntil(t, 30*time.Second, "nothing held once nas is back", s.heldIs())

	// Now the whole files root.
	aside = s.swapWithEmpty(t, s.Files)
	waitUntil(t, 30*time.Second, "the files root held as empty", s.heldIs(".:empty"))
	st := s.mustStatus()
	if st.Missing.HeldFiles != 3 || st.Missing.Documents != 0 || st.Documents.Live != 3 {
		t.Fatalf("status while the root is empty: missing %+v, documents %+v", st.Missing, st.Documents)
	}
	expectMetrics(t, s.metrics(), map[string]float64{
		`homeindex_held_directories{reason="empty"}`: 1,
		`homeindex_held_files{why="held_directory"}`: 3,
		`homeindex_missing_documents`:                0,
		`homeindex_missing_hold`:                     0,
	})
	s.allIndexed(t, ids...)
	s.outputIntact(t, ids...)
	swapBack(t, s.Files, aside)
	waitUntil(t, 30*time.Second, "nothing held once the root is back", s.heldIs())
	// A few more syncs (one per second): still one run per document, nothing new.
	before := s.mustStatus().Sync.Count
	waitUntil(t, 30*time.Second, "two more syncs", func() error {
		if c := s.mustStatus().Sync.Count; c < before+2 {
			return errorf("syncs %d, want %d", c, before+2)
		}
		return nil
	})
	s.allIndexed(t, ids...)
	s.outputIntact(t, ids...)
	s.oneRunEach(t, ids...)
	if st := s.mustStatus(); st.Missing.Documents != 0 || st.Documents.Live != 3 {
		t.Fatalf("after the return: %+v %+v", st.Missing, st.Documents)
	}
	s.stopAndVerify(t)
}

// An unreadable subdirectory (a real EACCES: the daemon runs as nobody through setpriv, since
// root reads every directory) keeps its documents; they stay as they are when it is readable
// again, and no module runs again.
func TestMountUnreadableSubdirectoryDeletesNothing(t *testing.T) {
	t.Parallel()
	s := newStack(t, []module{{Name: "example-module", UID: "e1"}})
	ids := []string{s.write("open.txt", "open file"), s.write("locked/a.txt", "locked a"), s.write("locked/in/b.txt", "locked b")}
	worker := s.newModule("example", bin.example, "example-module")
	runAsNobody(t, s, s.Daemon, worker)
	s.Daemon.Start()
	worker.Start()
	waitUntil(t, 60*time.Second, "every file through the chain", s.docsDone(ids, noted))

	locked := filepath.Join(s.Files, "locked")
	if err := os.Chmod(locked, 0o000); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "locked held as unreadable", s.heldIs("locked:unreadable"))
	st := s.mustStatus()
	if len(st.Missing.Held) != 1 || !strings.Contains(st.Missing.Held[0].Error, "permission denied") || st.Missing.HeldFiles != 2 {
		t.Fatalf("held: %+v", st.Missing)
	}
	expectMetrics(t, s.metrics(), map[string]float64{`homeindex_held_directories{reason="unreadable"}`: 1})
	s.allIndexed(t, ids...)
	s.outputIntact(t, ids...)
	if err := os.Chmod(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "nothing held once readable", s.heldIs())
	s.allIndexed(t, ids...)
	s.outputIntact(t, ids...)
	s.oneRunEach(t, ids...)
	s.stopAndVerify(t)
}

// runAsNobody makes the daemon and the module run as uid/gid 65534 with setpriv, their
// directories their own.
func runAsNobody(t *testing.T, s *stack, procs ...*proc) {
	t.Helper()
	setpriv, err := execLookPath("setpriv")
	if err != nil {
		t.Fatalf("setpriv (util-linux, installed by make deps): %v", err)
	}
	// Every directory from / down to the stack and to the binaries must be traversable by nobody.
	for _, start := range []string{s.root, filepath.Dir(bin.homeindexd)} {
		for d := start; d != "/"; d = filepath.Dir(d) {
			fi, err := os.Stat(d)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm()&0o005 != 0o005 {
				if err := os.Chmod(d, fi.Mode().Perm()|0o005); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, d := range []string{s.Meta, s.State, s.Record} {
		if err := filepath.Walk(d, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Chown(p, 65534, 65534)
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range procs {
		p.args = append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", p.bin}, p.args...)
		p.bin = setpriv
	}
}

// A file that really disappeared makes its document missing: out of the index, its by-id
// directory and module output kept, and purged once MISSING_RETENTION (shortened here) ends.
func TestMountDeletedFileGoesMissingThenIsPurged(t *testing.T) {
	t.Parallel()
	s := newStack(t, []module{{Name: "example-module", UID: "e1"}}, withDaemonEnv("MISSING_RETENTION", "20s"))
	keep, gone := s.write("keep.txt", "kept file"), s.write("gone.txt", "deleted file")
	s.Daemon.Start()
	s.startModule("example", bin.example, "example-module")
	waitUntil(t, 60*time.Second, "both files through the chain", s.docsDone([]string{keep, gone}, noted))

	if err := os.Remove(filepath.Join(s.Files, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "one missing document", s.missingIs("1 missing", func(m ops.MissingStatus) bool { return m.Documents == 1 }))
	waitUntil(t, 30*time.Second, "the missing document out of the index", func() error {
		got, err := s.indexedIDs(gone, keep)
		if err != nil {
			return err
		}
		if got[gone] || !got[keep] {
			return errorf("indexed: %v", got)
		}
		return nil
	})
	s.outputIntact(t, gone) // kept during the retention
	if _, err := os.Lstat(filepath.Join(s.Meta, "by-path", "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("by-path link of the deleted file: %v", err)
	}
	waitUntil(t, 90*time.Second, "the missing document purged", func() error {
		if _, err := os.Stat(filepath.Join(s.Meta, "by-id", gone)); !os.IsNotExist(err) {
			return errorf("by-id/%s still there (%v)", gone, err)
		}
		return s.missingIs("0 missing, 1 purged", func(m ops.MissingStatus) bool { return m.Documents == 0 && m.PurgedTotal == 1 })()
	})
	expectMetrics(t, s.metrics(), map[string]float64{`homeindex_missing_purged_total`: 1, `homeindex_missing_documents`: 0})
	s.outputIntact(t, keep)
	s.allIndexed(t, keep)
	s.stopAndVerify(t)
}

// Content moved to a new path, or deleted and later restored elsewhere, keeps its document and
// module output: the module never runs again.
func TestMountMovedContentReusesModuleOutput(t *testing.T) {
	t.Parallel()
	s := newStack(t, []module{{Name: "example-module", UID: "e1"}})
	keep, moved := s.write("keep.txt", "kept file"), s.write("old/report.txt", "moving content")
	s.Daemon.Start()
	s.startModule("example", bin.example, "example-module")
	waitUntil(t, 60*time.Second, "both files through the chain", s.docsDone([]string{keep, moved}, noted))

	// A move within the tree.
	if err := os.MkdirAll(filepath.Join(s.Files, "new", "place"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(s.Files, "old", "report.txt"), filepath.Join(s.Files, "new", "place", "renamed.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.Files, "old")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "the document at its new path", pathsAre(s, moved, "new/place/renamed.txt"))

	// Deleted (missing), then restored somewhere else.
	data, err := os.ReadFile(filepath.Join(s.Files, "new", "place", "renamed.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(s.Files, "new")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "the document missing", s.missingIs("1 missing", func(m ops.MissingStatus) bool { return m.Documents == 1 }))
	writeFile(t, filepath.Join(s.Files, "restored", "copy.txt"), string(data))
	waitUntil(t, 30*time.Second, "the document back at the restored path", pathsAre(s, moved, "restored/copy.txt"))
	waitUntil(t, 30*time.Second, "nothing missing", s.missingIs("0 missing", func(m ops.MissingStatus) bool { return m.Documents == 0 }))
	waitUntil(t, 30*time.Second, "the document back in the index", func() error {
		got, err := s.indexedIDs(moved)
		if err != nil || !got[moved] {
			return errorf("indexed %v %v", got, err)
		}
		return nil
	})
	if d, err := s.doc(moved); err != nil || noted(d) != nil || d.Next != "" {
		t.Fatalf("document after its return: %+v %v", d, err)
	}
	s.outputIntact(t, keep, moved)
	s.oneRunEach(t, keep, moved)
	s.stopAndVerify(t)
}

func pathsAre(s *stack, id string, want ...string) func() error {
	return func() error {
		d, err := s.doc(id)
		if err != nil {
			return err
		}
		if strings.Join(d.PathsList, ",") != strings.Join(want, ",") {
			return errorf("paths %v, want %v", d.PathsList, want)
		}
		return nil
	}
}

// A sync that would make more than MISSING_HOLD_SHARE of the documents (and at least
// MISSING_HOLD_MIN) missing at once holds those removals and says so, until the operator
// confirms: once with `homeindexd sync --confirm-missing`, once with POST /api/missing/confirm.
func TestMountMassRemovalHoldAndConfirmation(t *testing.T) {
	t.Parallel()
	// No sync each second: one could walk the tree between two of removeSome's removals (seen
	// on a loaded machine: 2, then 4), and neither part is a mass removal. The watcher sees the
	// six removals settle together.
	s := newStack(t, nil, withDaemonEnv("MISSING_HOLD_MIN", "5", "MISSING_HOLD_SHARE", "20%", "CRON_EXPRESSION", "0 2 * * *"))
	var batch1, batch2 []string
	s.write("keep.txt", "kept file")
	for i := range 8 {
		batch1 = append(batch1, s.write(filepath.Join("one", string(rune('a'+i))+".txt"), "batch one "+string(rune('a'+i))))
		batch2 = append(batch2, s.write(filepath.Join("two", string(rune('a'+i))+".txt"), "batch two "+string(rune('a'+i))))
	}
	s.Daemon.Start()
	waitUntil(t, 60*time.Second, "every file indexed", func() error {
		got, err := s.indexedIDs(append(append([]string{}, batch1...), batch2...)...)
		if err != nil {
			return err
		}
		for id, ok := range got {
			if !ok {
				return errorf("%s not indexed", id)
			}
		}
		return nil
	})

	// 6 of 17 documents (35%) at once: held.
	removeSome := func(dir string) {
		for i := range 6 {
			if err := os.Remove(filepath.Join(s.Files, dir, string(rune('a'+i))+".txt")); err != nil {
				t.Fatal(err)
			}
		}
	}
	removeSome("one")
	waitUntil(t, 30*time.Second, "the removal held", s.missingIs("a hold of 6", func(m ops.MissingStatus) bool {
		return m.Hold != nil && m.Hold.Paths == 6 && m.Hold.Documents == 6 && m.Hold.Live == 17
	}))
	expectMetrics(t, s.metrics(), map[string]float64{`homeindex_missing_hold`: 1, `homeindex_held_files{why="hold"}`: 6})
	s.allIndexed(t, batch1...)
	if !strings.Contains(s.Daemon.Log(), "mass removal held") {
		t.Error("no log line says the removal is held")
	}
	out, errOut, code := s.cli("sync", "--confirm-missing")
	if code != 0 {
		t.Fatalf("sync --confirm-missing: exit %d: %s %s", code, out, errOut)
	}
	waitUntil(t, 30*time.Second, "6 missing, no hold", s.missingIs("6 missing", func(m ops.MissingStatus) bool {
		return m.Hold == nil && m.Documents == 6 && !m.ConfirmPending
	}))
	got, err := s.indexedIDs(batch1...)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range batch1 {
		if got[id] != (i >= 6) {
			t.Errorf("%s indexed %v", id, got[id])
		}
	}

	// Again, confirmed through the API this time (11 live: 6 is 55%).
	removeSome("two")
	waitUntil(t, 30*time.Second, "the second removal held", s.missingIs("a hold of 6", func(m ops.MissingStatus) bool {
		return m.Hold != nil && m.Hold.Paths == 6 && m.Hold.Live == 11
	}))
	resp, err := http.Post("http://"+s.HTTPAddr+"/api/missing/confirm", "text/plain", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("confirm without JSON: %d, want 415", resp.StatusCode)
	}
	var res ops.ConfirmResult
	postJSON(t, s.HTTPAddr, "/api/missing/confirm", &res)
	if !res.Confirmed || res.HeldPaths != 6 || res.Sync != "requested" {
		t.Fatalf("confirm answer: %+v", res)
	}
	waitUntil(t, 30*time.Second, "12 missing, no hold", s.missingIs("12 missing", func(m ops.MissingStatus) bool {
		return m.Hold == nil && m.Documents == 12
	}))
	expectMetrics(t, s.metrics(), map[string]float64{`homeindex_missing_hold`: 0, `homeindex_missing_documents`: 12})
	s.stopAndVerify(t)
}

// postJSON POSTs {} as JSON and decodes a 200 answer.
func postJSON(t *testing.T, addr, path string, v any) {
	t.Helper()
	resp, err := http.Post("http://"+addr+path, "application/json", bytes.NewReader([]byte("{}")))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b.String())
	}
	if err := jsonUnmarshal(b.Bytes(), v); err != nil {
		t.Fatalf("POST %s: %q: %v", path, b.String(), err)
	}
}
