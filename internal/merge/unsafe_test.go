package merge

import (
	"strings"
	"testing"

	"github.com/homeindex/homeindex/protocol"
)

// Ids that are not safe directory names are quarantined before anything touches the disk;
// an id moved to another document is a stale result. Nothing is written anywhere.
func TestUnsafeIDsRejected(t *testing.T) {
	f := newFixture(t, Config{})
	f.addDoc(docA, "a.txt", "", "m1")
	f.addDoc(docB, "b.txt", "", "m1")
	item := f.dispatch(docA, "m1")
	f.drain()
	info, err := protocol.ParseItem(item)
	if err != nil {
		t.Fatal(err)
	}
	job := `"_hi_job":"` + info.Job.Token + `","_hi_attempt":1,"_hi_since":1`
	before := treeSnapshot(t, f.base, "state")

	bad := []string{"../x", "../../../../tmp/evil", "/etc/passwd", "a\x00b", "a/b", "..", ".", "a b", strings.Repeat("a", 600)}
	for _, id := range bad {
		f.pushDone(`{"module":"m1","document":{"id":` + quote(id) + `,"paths":{"a.txt":1},"title":"x",` + job + `},"content":"words"}`)
		f.mustHandleNext()
		if rec := f.lastQuarantined(); !strings.Contains(rec.Reason, "invalid document id") {
			t.Fatalf("id %q: reason %q", id, rec.Reason)
		}
	}
	if d := diffTrees(before, treeSnapshot(t, f.base, "state")); len(d) > 0 {
		t.Fatalf("files changed by rejected results: %v", d)
	}
	// docA's token with docB's id: the token names docA's job, so docB is never touched (the
	// result goes to docA, the altered id is counted as a rejected field).
	f.pushDone(result("m1", strings.Replace(item, docA, docB, 1), `"title":"x"`, `"words"`))
	f.mustHandleNext()

	if s := f.m.Stats(); s.Quarantined != int64(len(bad)) || s.RejectedFields != 1 || s.Merged != 1 {
		t.Fatalf("stats %+v", s)
	}
	f.assertUntouched(docB, "m1", "m1")
	for _, d := range diffTrees(before, treeSnapshot(t, f.base, "state")) {
		if !strings.Contains(d, docA) && !strings.Contains(d, "metadata/.tmp") {
			t.Fatalf("a file outside docA's directory changed: %v", d)
		}
	}
}
