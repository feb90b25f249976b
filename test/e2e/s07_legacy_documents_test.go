package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// Scenario 7, legacy documents stay searchable: a metadata directory written by the upstream
// Python core, with output of an older module version (version.json 0), is searchable as soon
// as the daemon starts, while its files are requeued, after the new module version re-ran them,
// and again across a uid change; nothing crashes and no legacy field is lost.
func TestS07LegacyDocumentsStaySearchable(t *testing.T) {
	t.Parallel()
	const mod = "example-module"
	s := newStack(t, []module{{Name: mod, UID: "v1"}})
	files := map[string]string{"old/report.txt": "an old report", "archive/usb/scan.txt": "an old scan"}
	mtime := time.Unix(1700000000, 500_000_000)
	var ids []string
	for rel, content := range files {
		id := s.write(rel, content)
		ids = append(ids, id)
		if err := os.Chtimes(filepath.Join(s.Files, rel), mtime, mtime); err != nil {
			t.Fatal(err)
		}
		seedLegacyDocument(t, s.Meta, id, rel, len(content), mtime, mod)
	}

	legacyFields := func(wantNote string) func(protocol.Document) error {
		return func(d protocol.Document) error {
			if n := field(d, "note"); n != wantNote {
				return fmt.Errorf("note %q, want %q", n, wantNote)
			}
			var caption struct{ Text string }
			if err := json.Unmarshal(d.Fields["old_caption"], &caption); err != nil || caption.Text != "a cat on a tree" {
				return fmt.Errorf("old_caption %s (%v), want the legacy value", d.Fields["old_caption"], err)
			}
			return nil
		}
	}
	searchable := func(what string, wantNote, wantNext string) {
		t.Helper()
		waitUntil(t, 30*time.Second, what, func() error {
			for _, id := range ids {
				hits, err := s.searchCLI(fmt.Sprintf("id = %q", id), "")
				if err != nil {
					return err
				}
				if len(hits) != 1 {
					return fmt.Errorf("%s: %d hits", id, len(hits))
				}
				if hits[0].Next != wantNext {
					return fmt.Errorf("%s: next %q, want %q", id, hits[0].Next, wantNext)
				}
				if err := legacyFields(wantNote)(hits[0]); err != nil {
					return fmt.Errorf("%s: %w", id, err)
				}
			}
			return nil
		})
	}

	s.Daemon.Start()
	searchable("the legacy documents searchable while requeued for the module", "from the old version", mod)

	worker := s.startModule("example", bin.example, mod)
	waitUntil(t, 60*time.Second, "the new module version's output", s.docsDone(ids, legacyFields("hello")))
	searchable("the documents searchable after the re-run", "hello", "")
	if runs := s.records().runs(); len(runs) != len(ids) {
		t.Fatalf("runs %v, want one per legacy file (version.json said 0)", runs)
	}

	// A uid change requeues them again: still searchable meanwhile, and after.
	worker.Stop()
	s.Daemon.Stop()
	s.setModules([]module{{Name: mod, UID: "v2"}})
	s.Daemon.Start()
	searchable("the documents searchable while requeued after a uid change", "hello", mod)
	worker.Env["MODULES"], worker.Env["MODULE_UID"] = modulesYAML(s.Modules), "v2"
	worker.Start()
	waitUntil(t, 60*time.Second, "the requeued documents through the chain", s.docsDone(ids, legacyFields("hello")))
	searchable("the documents searchable at the end", "hello", "")

	for _, p := range []*proc{s.Daemon, worker} {
		if !p.Running() {
			t.Fatalf("%s exited", p.name)
		}
		if strings.Contains(p.Log(), "panic") {
			t.Fatalf("%s panicked", p.name)
		}
	}
	worker.Stop() // exit code 0, or the test fails
	s.Daemon.Stop()
}

// seedLegacyDocument writes by-id/<id>/document.json as the upstream Python core did (indented,
// paths with float mtimes, a module field from an older module version) and the module's
// version.json of that older version.
func seedLegacyDocument(t *testing.T, meta, id, rel string, size int, mtime time.Time, module string) {
	t.Helper()
	m := float64(mtime.UnixNano()) / 1e9
	doc := map[string]any{"id": id, "paths": map[string]any{rel: m}, "paths_list": []string{rel}, "mtime": m,
		"size": size, "type": "text/plain", "copies": 1, "version": 1, "next": "",
		"note": "from the old version", "old_caption": map[string]any{"text": "a cat on a tree"}}
	b, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(meta, "by-id", id, "document.json"), string(b))
	writeFile(t, filepath.Join(meta, "by-id", id, module, "version.json"), `{"version": 0}`)
}
