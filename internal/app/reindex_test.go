package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/internal/sqlitedb"
)

// countingIndex counts the documents written to the files collection of the index it wraps.
type countingIndex struct {
	search.Index
	files *countingCollection
}

func (c *countingIndex) Files() search.Collection { return c.files }

type countingCollection struct {
	search.Collection
	mu      sync.Mutex
	upserts map[string]int // document id → upserts
}

func (c *countingCollection) Upsert(ctx context.Context, docs []json.RawMessage) error {
	c.mu.Lock()
	for _, d := range docs {
		var v struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(d, &v)
		c.upserts[v.ID]++
	}
	c.mu.Unlock()
	return c.Collection.Upsert(ctx, docs)
}

// take returns the upserts counted since the last take, and resets them.
func (c *countingCollection) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.upserts
	c.upserts = map[string]int{}
	return out
}

// counters holds the counting collection of each test, by state directory (tests run in
// parallel; wrapIndex is set once for the package).
var counters sync.Map // state directory → *countingCollection

func init() {
	wrapIndex = func(cfg *config.Config, idx search.Index) search.Index {
		v, ok := counters.Load(cfg.StateDirectory)
		if !ok {
			return idx
		}
		cc := v.(*countingCollection)
		cc.Collection = idx.Files()
		return &countingIndex{Index: idx, files: cc}
	}
}

// countWrites makes every index e opens count its upserts.
func countWrites(e *testEnv) *countingCollection {
	cc := &countingCollection{upserts: map[string]int{}}
	counters.Store(e.state, cc)
	e.t.Cleanup(func() { counters.Delete(e.state) })
	return cc
}

// expectUpserts checks that exactly want were upserted, once each.
func expectUpserts(t *testing.T, got map[string]int, want []string) {
	t.Helper()
	wantSet := map[string]bool{}
	for _, id := range want {
		wantSet[id] = true
		if got[id] != 1 {
			t.Errorf("document %s upserted %d times, want once", id, got[id])
		}
	}
	extra := 0
	for id := range got {
		if !wantSet[id] {
			extra++
		}
	}
	if extra > 0 || len(got) != len(want) {
		t.Errorf("%d documents upserted, want %d (%d unexpected)", len(got), len(want), extra)
	}
}

const reindexWarning = "search index disagreed"

// An initial sync writes each document to the index once, and no start or sync after it
// re-indexes what is already there: with and without modules.
func TestInitialSyncIndexesOnce(t *testing.T) {
	for _, mods := range []string{"", modulesYAML("m1", "m2")} {
		name := "no modules"
		if mods != "" {
			name = "modules"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, "MODULES", mods, "REDIS_HOST", "127.0.0.1:1")
			cc := countWrites(e)
			const n = 2000
			ids := make([]string, 0, n)
			for i := range n {
				ids = append(ids, e.write(fmt.Sprintf("d%02d/f%04d.txt", i/100, i), fmt.Sprint("file number ", i)))
			}
			e.sync()
			expectUpserts(t, cc.take(), ids)
			if strings.Contains(e.logBuf.String(), reindexWarning) {
				t.Errorf("the initial sync re-indexed its own documents:\n%s", e.logBuf)
			}

			// A restart with nothing changed writes nothing to the index.
			e.close()
			e.open()
			e.sync()
			if got := cc.take(); len(got) != 0 {
				t.Errorf("a restart with nothing changed upserted %d documents", len(got))
			}
			if strings.Contains(e.logBuf.String(), reindexWarning) {
				t.Errorf("a restart re-indexed:\n%s", e.logBuf)
			}
		})
	}
}

// Changes synced into the catalog but not yet written out when the daemon stopped are written
// at the next start, exactly those.
func TestRestartWritesOnlyUndrainedChanges(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, "MODULES", modulesYAML("m1"), "REDIS_HOST", "127.0.0.1:1")
	cc := countWrites(e)
	for i := range 200 {
		e.write(fmt.Sprintf("d/f%03d.txt", i), fmt.Sprint("file ", i))
	}
	e.sync()
	cc.take()

	changed := []string{e.write("d/f000.txt", "changed 0"), e.write("d/f001.txt", "changed 1"), e.write("new/g.txt", "new file")}
	if _, err := e.app.SyncOnce(e.ctx, "test"); err != nil { // synced, not drained
		t.Fatal(err)
	}
	e.close()
	e.open()
	res, err := e.app.Outbox.Drain(e.ctx)
	if err != nil || res.IndexPending > 0 {
		t.Fatalf("drain: %+v %v", res, err)
	}
	expectUpserts(t, cc.take(), changed)
	if strings.Contains(e.logBuf.String(), reindexWarning) {
		t.Errorf("the start re-indexed:\n%s", e.logBuf)
	}
	if problems, err := e.app.Verify(e.ctx); err != nil || len(problems) > 0 {
		t.Fatalf("verify: %v %v", err, problems)
	}
}

// A switch to an empty index (here: the embedded index file deleted) rebuilds it once, and the
// starts after that write nothing.
func TestEmptyIndexRebuiltOnce(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	cc := countWrites(e)
	var ids []string
	for i := range 300 {
		ids = append(ids, e.write(fmt.Sprintf("d/f%03d.txt", i), fmt.Sprint("file ", i)))
	}
	e.sync()
	cc.take()
	e.close()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(filepath.Join(e.state, searchIndexFile+suffix)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	e.open()
	e.sync()
	expectUpserts(t, cc.take(), ids)
	if !strings.Contains(e.logBuf.String(), reindexWarning) {
		t.Errorf("no log line for the rebuild:\n%s", e.logBuf)
	}
	for range 2 {
		e.close()
		e.open()
		e.sync()
		if got := cc.take(); len(got) != 0 {
			t.Fatalf("a start after the rebuild upserted %d documents", len(got))
		}
		if strings.Contains(e.logBuf.String(), reindexWarning) {
			t.Fatalf("a start after the rebuild re-indexed:\n%s", e.logBuf)
		}
	}
}

// An index written by an earlier version is upgraded in place when the daemon opens it, with
// a log line saying what was rewritten and how long it took (a pass over every document, which
// on a large library is worth knowing about), and nothing is re-sent: the next sync writes no
// document. Here: the layout before the sort key columns.
func TestOpenLogsIndexUpgrade(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	cc := countWrites(e)
	for i := range 20 {
		e.write(fmt.Sprintf("d/f%02d.txt", i), strings.Repeat("x", i))
	}
	e.sync()
	cc.take()
	e.close()
	db := sqlitedb.Open("file:" + filepath.Join(e.state, searchIndexFile))
	var stmts []string
	for _, q := range []string{
		`SELECT format('DROP INDEX %Q', name) FROM sqlite_schema WHERE type = 'index' AND (name LIKE '%\_x\_ka\_%' ESCAPE '\' OR name LIKE '%\_x\_kd\_%' ESCAPE '\' OR name LIKE '%\_x\_km\_%' ESCAPE '\')`,
		`SELECT format('ALTER TABLE files_docs DROP COLUMN %Q', name) FROM pragma_table_info('files_docs') WHERE name LIKE 's<:%' OR name LIKE 's>:%'`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			stmts = append(stmts, s)
		}
		rows.Close()
	}
	if len(stmts) < 4 {
		t.Fatalf("old layout: %q, want the sort indexes and key columns dropped", stmts)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	db.Close()

	const upgraded = "search index: upgraded the layout an earlier version wrote"
	e.open()
	if log := e.logBuf.String(); !strings.Contains(log, upgraded) || !strings.Contains(log, "files: sort key columns added (20 documents, ") {
		t.Fatalf("no log line for the upgrade:\n%s", log)
	}
	e.sync()
	if got := cc.take(); len(got) != 0 {
		t.Fatalf("the sync after the upgrade upserted %d documents", len(got))
	}
	res, err := e.app.Index.Files().Search(e.ctx, search.Query{Sort: []string{"size:desc"}, Limit: 1})
	if err != nil || len(res.Hits) != 1 || !strings.Contains(string(res.Hits[0]), "f19.txt") {
		t.Fatalf("largest file after the upgrade: %v %v, want f19.txt", res.Hits, err)
	}
	e.close()
	e.open()
	if strings.Contains(e.logBuf.String(), upgraded) {
		t.Fatalf("the next start upgraded again:\n%s", e.logBuf)
	}
}
