package merge

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/protocol"
)

// assertUntouched checks a document kept its `next` and gained no fields, and that the
// module wrote nothing for it.
func (f *fixture) assertUntouched(id, next, module string) {
	f.t.Helper()
	d := f.doc(id)
	if d.Next != next || len(d.Fields) != 0 {
		f.t.Fatalf("document %s changed: next %q fields %v", id, d.Next, d.Fields)
	}
	if _, err := os.Stat(filepath.Join(f.metaDir, "by-id", id, module)); !os.IsNotExist(err) {
		f.t.Fatalf("module dir of %s/%s written: %v", id, module, err)
	}
	if n := f.llen(protocol.DoneProcessingKey); n != 0 {
		f.t.Fatalf("%d results left in processing", n)
	}
}

// Results whose job is not current are dropped and counted; nothing is written.
func TestStaleResultsDropped(t *testing.T) {
	otherToken := strings.Repeat("ab", 16)
	cases := []struct {
		name   string
		stage  func(f *fixture, item string) string // returns the payload
		replay bool
	}{
		{"token of another dispatch", func(f *fixture, item string) string {
			return result("m1", replaceToken(t, item, otherToken), `"title":"x"`, `"words"`)
		}, false},
		{"module requeued since", func(f *fixture, item string) string {
			f.dispatchAgain(docA, "m1")
			return result("m1", item, `"title":"x"`, `"words"`)
		}, false},
		{"file changed (document retired)", func(f *fixture, item string) string {
			if err := f.cat.Update(f.ctx, func(tx *catalog.Tx) error { return tx.SetRetired(f.ctx, docA, true) }); err != nil {
				t.Fatal(err)
			}
			return result("m1", item, `"title":"x"`, `"words"`)
		}, false},
		{"unknown file", func(f *fixture, item string) string {
			other := jobToken.ReplaceAllString(strings.Replace(item, docA, "00000000000000ff", 1), `"_hi_job":"`+protocol.NewToken()+`"`)
			return result("m1", other, `"title":"x"`, `"words"`)
		}, false},
		{"no job fields (another core's item)", func(f *fixture, item string) string {
			return `{"module":"m1","document":{"id":"` + docA + `","paths":{"a.txt":1700000000.5},"title":"x"},"content":"words"}`
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			f.addDoc(docA, "a.txt", "", "m1")
			f.dispatch(docA, "m1")
			f.work("m1", func(item string) string { return tc.stage(f, item) })
			f.mustHandleNext()
			if s := f.m.Stats(); s.Stale != 1 || s.Merged != 0 || s.Quarantined != 0 {
				t.Fatalf("stats %+v", s)
			}
			if _, state, _ := f.cat.Document(f.ctx, docA); state == catalog.DocLive {
				f.assertUntouched(docA, "m1", "m1")
			}
			if _, err := os.Stat(filepath.Join(f.metaDir, "by-id", docA, "m1")); !os.IsNotExist(err) {
				t.Fatalf("stale result wrote files: %v", err)
			}
		})
	}
}

// dispatchAgain replaces the job's dispatch with a new token (the module was requeued).
func (f *fixture) dispatchAgain(id, module string) {
	f.t.Helper()
	if _, err := f.q.Withdraw(f.ctx, module, []string{id}); err != nil {
		f.t.Fatal(err)
	}
	if err := f.rdb.HDel(f.ctx, protocol.JobsKey(module), id).Err(); err != nil {
		f.t.Fatal(err)
	}
	f.dispatch(id, module)
}

func replaceToken(t testing.TB, item, token string) string {
	t.Helper()
	info, err := protocol.ParseItem(item)
	if err != nil {
		t.Fatal(err)
	}
	j := info.Job
	j.Token = token
	out, err := protocol.WithJob(item, j)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A second, different result for a job already merged is a replay: nothing changes.
func TestAlreadyMergedIsReplay(t *testing.T) {
	f := newFixture(t, Config{})
	f.addDoc(docA, "a.txt", "", "m1")
	f.dispatch(docA, "m1")
	var item string
	f.work("m1", func(it string) string { item = it; return result("m1", it, `"title":"first"`, "") })
	f.mustHandleNext()
	f.pushDone(result("m1", item, `"title":"second"`, `"late words"`))
	f.mustHandleNext()
	if s := f.m.Stats(); s.Merged != 1 || s.Replayed != 1 {
		t.Fatalf("stats %+v", s)
	}
	if d := f.doc(docA); string(d.Fields["title"]) != `"first"` || d.Next != "m2" {
		t.Fatalf("doc %+v", d)
	}
	if _, err := os.Stat(filepath.Join(f.metaDir, "by-id", docA, "m1", "content.json")); !os.IsNotExist(err) {
		t.Fatalf("replay wrote content: %v", err)
	}
}

// Results of modules that are not configured, or whose names are not safe, are dropped and
// counted without touching anything.
func TestUnknownModuleDropped(t *testing.T) {
	f := newFixture(t, Config{})
	f.addDoc(docA, "a.txt", "", "m1")
	item := f.dispatch(docA, "m1")
	before := treeSnapshot(t, f.base, "state")
	names := []string{"m9", "../m1", "a/b", "M1", "m1/../m1", "", "/m1", "m1\x00"}
	for _, name := range names {
		f.pushDone(result(name, item, `"title":"x"`, `"words"`))
		f.mustHandleNext()
	}
	s := f.m.Stats()
	// "" is no module at all: a malformed envelope, quarantined.
	if s.UnknownModule != int64(len(names)-1) || s.Quarantined != 1 || s.Merged != 0 {
		t.Fatalf("stats %+v", s)
	}
	f.assertUntouched(docA, "m1", "m1")
	if d := diffTrees(before, treeSnapshot(t, f.base, "state")); len(d) > 0 {
		t.Fatalf("files changed: %v", d)
	}
	if _, ok, _ := f.q.JobItem(f.ctx, "m1", docA); !ok {
		t.Fatal("the real job's in-flight entry was released")
	}
}

var jobToken = regexp.MustCompile(`"_hi_job":"[0-9a-f]+"`)

// A result whose echoed id was altered still answers the job its token names: the id is
// ignored (counted as a rejected field) and the job's document gets the result.
func TestAlteredIDMergesIntoTheTokensJob(t *testing.T) {
	f := newFixture(t, Config{})
	f.addDoc(docA, "a.txt", "", "m1")
	f.dispatch(docA, "m1")
	f.work("m1", func(item string) string {
		return result("m1", strings.Replace(item, `"id":"`+docA+`"`, `"id":"00000000000000ff"`, 1), `"title":"x"`, `"words"`)
	})
	f.mustHandleNext()
	if s := f.m.Stats(); s.Merged != 1 || s.RejectedFields != 1 || s.Stale != 0 {
		t.Fatalf("stats %+v", s)
	}
	doc, _, err := f.cat.Document(f.ctx, docA)
	if err != nil || string(doc.Fields["title"]) != `"x"` || doc.ID != docA {
		t.Fatalf("document %+v %v", doc, err)
	}
}
