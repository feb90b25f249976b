package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/search"
)

// A search index that lost its documents (a wiped Meilisearch volume, a deleted index file,
// a switch of backend) is rebuilt from the catalog on the next start: documents and the
// chunks of module content on disk come back, and an entry the catalog no longer has goes.
func TestReconcileRebuildsLostIndex(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, "MODULES", modulesYAML("m1"), "REDIS_HOST", "127.0.0.1:1")
	var ids []string
	for i := range 30 {
		ids = append(ids, e.write(fmt.Sprintf("d/f%02d.txt", i), fmt.Sprint("file ", i)))
	}
	e.sync()
	dir, err := e.app.Store.ModuleDir(ids[0], "m1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "content.json"), []byte(`"a zebra crossing"`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.close()

	// Lose the index, and leave one entry the catalog never had.
	if err := os.Remove(filepath.Join(e.state, searchIndexFile)); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(filepath.Join(e.state, searchIndexFile+suffix))
	}
	a := e.open()
	if err := a.Index.Files().Upsert(e.ctx, []json.RawMessage{json.RawMessage(`{"id":"stale0000000000","name":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	e.close()

	a = e.open()
	res, err := a.Outbox.Drain(e.ctx)
	if err != nil || res.IndexPending > 0 || res.MetaFailed > 0 {
		t.Fatalf("drain: %+v %v", res, err)
	}
	if n, err := a.Index.Files().Count(e.ctx); err != nil || n != 30 {
		t.Fatalf("index holds %d documents (%v), want 30", n, err)
	}
	problems, err := a.Verify(e.ctx)
	if err != nil || len(problems) > 0 {
		t.Fatalf("verify: %v\n%s", err, strings.Join(problems, "\n"))
	}
	hits, err := a.Index.Chunks().Search(e.ctx, search.Query{Q: "zebra"})
	if err != nil || len(hits.Hits) != 1 || !strings.Contains(string(hits.Hits[0]), ids[0]) {
		t.Fatalf("chunks after rebuild: %v %v", hits, err)
	}
	if !strings.Contains(e.logBuf.String(), "re-indexing those documents") {
		t.Errorf("no log line for the rebuild:\n%s", e.logBuf)
	}

	// A start with the index in line re-dirties nothing.
	e.close()
	a = e.open()
	if n, err := a.Outbox.ReconcileIndex(e.ctx, a.Config.ModuleNames()); err != nil || n != 0 {
		t.Fatalf("reconcile of an index in line: %d, %v", n, err)
	}
}
