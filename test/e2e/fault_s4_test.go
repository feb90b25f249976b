package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// qsEcho is a result document built from an item: its fields with overrides applied (a nil
// value deletes the field), as raw JSON.
func qsEcho(t testing.TB, item string, overrides map[string]any) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(item), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range overrides {
		if v == nil {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// qsWithID replaces an item's id, keeping everything else byte for byte.
func qsWithID(t testing.TB, item, id, newID string) string {
	t.Helper()
	old := `"id":"` + id + `"`
	if !strings.Contains(item, old) {
		t.Fatalf("item %s has no %s", item, old)
	}
	b, _ := json.Marshal(newID)
	return strings.Replace(item, old, `"id":`+string(b), 1)
}

// qsRedisKeys lists every key (SCAN; the test's admin connection, never the daemon's).
func (s *stack) qsRedisKeys() []string {
	s.t.Helper()
	var keys []string
	iter := s.Redis.Client().Scan(context.Background(), 0, "*", 1000).Iterator()
	for iter.Next(context.Background()) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		s.t.Fatal(err)
	}
	sort.Strings(keys)
	return keys
}

// S4, S5, S6 and S8: a module (played by the test) answers real jobs with hostile results.
//
//   - S4: ids with "../", absolute paths, NUL, backslashes, look-alikes, none: quarantined (an
//     id that is a valid name but not the job's is ignored: the token names the job, phase 2);
//   - S5: module names "../m", "a/b", "id", "paths", "ID", "EVIL": dropped as unknown;
//   - S6 (rejected): duplicate keys ("note" twice, "id" twice, "module" twice): quarantined;
//   - S8: results for an unknown file, for a real file with a token that is not its job's, and
//     without job fields: dropped as stale;
//
// each counted by one log line; nothing is written anywhere (the whole temporary tree, the
// metadata directory included, is unchanged) and no Redis key appears but the quarantine.
// Then S6 (merged): results that set `id` (another document's), `paths`, `size`, `next`,
// `failures`..., or `ID`, `Paths`, `_HI_JOB`: only the module's own fields are merged into the
// job's own document, core fields stay as they were, the other document is untouched, and
// files change only in those documents' directories.
func TestFaultS4HostileResultsRejected(t *testing.T) {
	t.Parallel()
	const mod = "evil"
	s := newStack(t, []module{{Name: mod, UID: "v1"}}, withDaemonEnv("DISPATCH_WINDOW", "16"))
	var rels []string
	for i := range 8 {
		rel := fmt.Sprintf("dir/f%d.txt", i)
		if i%3 == 0 {
			rel = fmt.Sprintf("archive/usb/f%d.txt", i)
		}
		s.write(rel, fmt.Sprintf("s4 file %d", i))
		rels = append(rels, rel)
	}
	s.Daemon.Start()
	rdb := s.Redis.Client()
	h := hostile{t: t, rdb: rdb, module: mod}
	items := h.claimN(6)
	var ids []string
	for id := range items {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	// The sync's outbox round is over once the documents and every by-path link are on disk
	// (links follow the documents within a round): only then is the tree a fair "before".
	waitUntil(t, 30*time.Second, "the documents and their links on disk", func() error {
		for _, id := range ids {
			if _, err := s.doc(id); err != nil {
				return err
			}
		}
		for _, rel := range rels {
			if _, err := os.Lstat(filepath.Join(s.Meta, "by-path", filepath.FromSlash(rel))); err != nil {
				return err
			}
		}
		return s.markerIs("usb", "pending")()
	})
	// A: the job whose token the rejected results carry; B: four jobs for merged results; C:
	// the document B1 pretends to be.
	idA, idC := ids[0], ids[5]
	itemA := items[idA]

	// Phase 1: everything rejected.
	var quarantined, unknown, stale []string
	reject := func(list *[]string, payload string) {
		*list = append(*list, payload)
		h.push(payload)
	}
	before := qsTree(t, s.root, "state", "logs")
	keysBefore := s.qsRedisKeys()
	docsBefore := map[string]string{}
	for _, id := range ids {
		docsBefore[id] = string(s.qsRawDoc(id))
	}
	for _, bad := range []string{"../../escape", "../../files/evil", "../../../../../../tmp/homeindex-s4-evil",
		filepath.Join(s.root, "abs-escape"), "/etc/passwd", "a\x00b", `..\..\win`, "..", ".", "",
		"０１２３４５６７８９ａｂｃｄｅｆ", idA + "/../" + idA, idA + "\x00"} {
		reject(&quarantined, qsResult(mod, qsWithID(t, itemA, idA, bad), `"note":"x"`, `"text"`))
	}
	for _, name := range []string{"../m", "a/b", "../" + mod, mod + "/..", "id", "paths", "ID", "EVIL", "evil\x00"} {
		reject(&unknown, qsResult(name, itemA, `"note":"x"`, `"text"`))
	}
	reject(&quarantined, qsResult(mod, itemA, `"note":"x","note":"y"`, ""))
	reject(&quarantined, qsResult(mod, strings.Replace(itemA, `"id":"`+idA+`"`, `"id":"`+idA+`","id":"`+idC+`"`, 1), "", ""))
	reject(&quarantined, `{"module":"`+mod+`","module":"other","document":`+itemA+`}`)
	reject(&stale, qsResult(mod, qsEcho(t, itemA, map[string]any{"id": "0123456789abcdef", protocol.FieldJob: protocol.NewToken()}), `"note":"x"`, ""))
	reject(&stale, qsResult(mod, qsEcho(t, items[idC], map[string]any{protocol.FieldJob: protocol.NewToken()}), `"note":"x"`, ""))
	reject(&stale, qsResult(mod, fmt.Sprintf(`{"id":%q,"paths":{"x":1},"note":"x"}`, idC), "", ""))
	waitUntil(t, 60*time.Second, "every hostile result handled", qsDoneEmpty(rdb))

	if got := len(qsQuarantine(t, rdb)); got != len(quarantined) {
		t.Errorf("%d results quarantined, want %d", got, len(quarantined))
	}
	counts := map[string]int{
		"result quarantined":                  len(quarantined),
		"result of an unknown module dropped": len(unknown),
		"stale result dropped":                len(stale) - 1,
		"result without job fields dropped":   1,
	}
	for msg, want := range counts {
		if got := len(qsLogged(s.Daemon, msg)); got != want {
			t.Errorf("%d %q log lines, want %d", got, msg, want)
		}
	}
	for _, l := range qsLogged(s.Daemon, "result quarantined") {
		if r, _ := l["reason"].(string); !strings.Contains(r, "invalid document id") && !strings.Contains(r, "duplicate key") &&
			!strings.Contains(r, "no id") {
			t.Errorf("quarantine reason %q", r)
		}
	}
	if d := qsDiff(before, qsTree(t, s.root, "state", "logs")); len(d) > 0 {
		t.Errorf("rejected results changed files:\n%s", strings.Join(d, "\n"))
	}
	if _, err := os.Lstat("/tmp/homeindex-s4-evil"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("/tmp/homeindex-s4-evil exists (%v): a result id escaped the metadata directory", err)
	}
	for _, id := range ids {
		if got := string(s.qsRawDoc(id)); got != docsBefore[id] {
			t.Errorf("document %s changed by rejected results", id)
		}
	}
	if keys := s.qsRedisKeys(); !slices.Equal(slices.DeleteFunc(keys, func(k string) bool { return k == protocol.QuarantineKey }), keysBefore) {
		t.Errorf("Redis keys changed: %v → %v", keysBefore, keys)
	}
	t.Logf("S4-S8 rejected: %d quarantined, %d unknown modules, %d stale; no file and no key changed", len(quarantined), len(unknown), len(stale))

	// Phase 2: results that try to set core fields are merged without them.
	type docCore struct {
		ID        string
		Paths     string
		PathsList []string
		Size      int64
		Mtime     float64
		Type      string
		Copies    int
		Version   int
		Archive   bool
		Offline   bool
		Failures  string
	}
	coreOf := func(id string) docCore {
		d, err := s.doc(id)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := json.Marshal(d.Paths)
		return docCore{d.ID, string(p), d.PathsList, d.Size, d.Mtime, d.Type, d.Copies, d.Version, d.HasArchivePaths, d.Offline, string(d.Failures)}
	}
	merged := ids[1:5]
	cores := map[string]docCore{}
	for _, id := range merged {
		cores[id] = coreOf(id)
	}
	before = qsTree(t, s.root, "state", "logs")
	note := func(i int) string { return fmt.Sprintf("merged %d", i) }
	h.push(
		// S6: another document's id; the token names this job.
		qsResult(mod, qsEcho(t, items[merged[0]], map[string]any{"id": idC, "s4_note": note(0)}), "", `"text zero"`),
		// S6: every other core field.
		qsResult(mod, qsEcho(t, items[merged[1]], map[string]any{"paths": map[string]any{"/etc/passwd": 1}, "paths_list": []string{"/etc/passwd"},
			"size": 1, "mtime": 1, "type": "application/x-evil", "copies": 99, "version": 99, "has_archive_paths": false,
			"offline": true, "failures": map[string]any{"other": map[string]any{"reason": "forged"}}, "uid": "forged", "s4_note": note(1)}), "", ""),
		// S6: `next` pointing elsewhere.
		qsResult(mod, qsEcho(t, items[merged[2]], map[string]any{"next": "bogus", "s4_note": note(2)}), "", ""),
		// S6: core fields in another case.
		qsResult(mod, qsEcho(t, items[merged[3]], map[string]any{"ID": "x", "Paths": map[string]any{"x": 1}, "_HI_JOB": "x", "Next": "x", "s4_note": note(3)}), "", ""),
	)
	waitUntil(t, 60*time.Second, "the four results merged", s.docsDone(merged, nil))
	for i, id := range merged {
		waitUntil(t, 30*time.Second, "document "+id+" written", func() error {
			d, err := s.doc(id)
			if err != nil {
				return err
			}
			if got := field(d, "s4_note"); got != note(i) {
				return fmt.Errorf("s4_note %q, want %q", got, note(i))
			}
			return nil
		})
		d, _ := s.doc(id)
		if got := coreOf(id); fmt.Sprint(got) != fmt.Sprint(cores[id]) {
			t.Errorf("document %s: core fields changed by a module:\n%+v\n→\n%+v", id, cores[id], got)
		}
		for _, k := range []string{"ID", "Paths", "_HI_JOB", "Next", "uid"} {
			if _, ok := d.Fields[k]; ok {
				t.Errorf("document %s: field %q merged", id, k)
			}
		}
	}
	if got := string(s.qsRawDoc(idC)); got != docsBefore[idC] {
		t.Errorf("document %s, whose id a result echoed, changed:\n%s\n→\n%s", idC, docsBefore[idC], got)
	}
	if got := len(qsLogged(s.Daemon, "result echoed another id; the job's id is used")); got != 1 {
		t.Errorf("%d \"echoed another id\" log lines, want 1", got)
	}
	if got := len(qsLogged(s.Daemon, "fields named like core fields dropped")); got != 1 {
		t.Errorf("%d \"fields named like core fields dropped\" log lines, want 1", got)
	}
	for _, d := range qsDiff(before, qsTree(t, s.root, "state", "logs")) {
		ok := false
		for _, id := range merged {
			ok = ok || strings.Contains(d, filepath.Join("metadata", "by-id", id)+string(filepath.Separator)) ||
				strings.HasSuffix(d, filepath.Join("metadata", "by-id", id))
		}
		// The drive's marker flips to ready when its last document clears the chain, and a
		// replaced document.json leaves its old inode as a spare in the temp directory.
		ok = ok || strings.Contains(d, "usb-status-") || strings.Contains(d, filepath.Join("metadata", ".tmp", "spare."))
		if !ok {
			t.Errorf("a merge changed a file outside its document's directory: %s", d)
		}
	}
	if !s.Daemon.Running() || strings.Contains(s.Daemon.Log(), "panic") {
		t.Fatal("homeindexd died or panicked")
	}
}
