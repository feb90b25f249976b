package app

import (
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/testutil/meilitest"
)

// The sync path with Meilisearch as the index: same results as the embedded backend, and while
// Meilisearch is down documents keep landing on disk; the index catches up when it returns.
func TestMeilisearchBackendCatchesUpAfterOutage(t *testing.T) {
	m := meilitest.Start(t)
	e := newTestEnv(t, "MEILISEARCH_HOST", m.URL, "MEILISEARCH_API_KEY", m.MasterKey)
	a := e.write("a.txt", "alpha")
	e.write("archive/d1/b.txt", "bravo")
	e.sync()
	if !e.indexed(a) || len(e.search("", "has_archive_paths = true")) != 1 {
		t.Fatal("not indexed in Meilisearch")
	}
	m.Stop()
	c := e.write("c.txt", "charlie")
	e.remove("a.txt")
	if _, err := e.app.SyncOnce(e.ctx, "test"); err != nil {
		t.Fatal(err)
	}
	res, err := e.app.Outbox.Drain(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.IndexPending == 0 || res.MetaFailed != 0 {
		t.Fatalf("outbox during the outage: %+v", res)
	}
	if e.doc(c).ID != c || e.link("a.txt") != "" || !e.hasDir(a) { // a is missing: directory kept
		t.Fatal("metadata directory not updated while the index was down")
	}
	if strings.Contains(res.IndexErr.Error(), m.MasterKey) {
		t.Fatal("API key in an error")
	}
	m.Restart()
	e.sync() // drains and verifies: index equal to the catalog
	if e.indexed(a) || !e.indexed(c) {
		t.Fatalf("after the outage: a indexed %v, c indexed %v", e.indexed(a), e.indexed(c))
	}
}
