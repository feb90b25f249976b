package search

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

func openEmbedded(t *testing.T) Index {
	t.Helper()
	ix, err := OpenEmbedded(filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatalf("open embedded: %v", err)
	}
	t.Cleanup(func() {
		if err := ix.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return ix
}

func TestConformanceEmbedded(t *testing.T) {
	t.Parallel()
	runConformance(t, openEmbedded)
}

func TestEmbeddedReopenKeepsDataAndSettings(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "index.db")
	ix, err := OpenEmbedded(path)
	if err != nil {
		t.Fatal(err)
	}
	loadFixture(t, ix.Files())
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err = OpenEmbedded(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got := idSet(search(t, ix.Files(), Query{Q: "zebra", Filter: `type = "text/plain"`})); got != "d1" {
		t.Errorf("after reopen: got [%s], want [d1]", got)
	}
	if n := count(t, ix.Files()); n != int64(len(fixtureDocs)) {
		t.Errorf("count after reopen = %d, want %d", n, len(fixtureDocs))
	}
}

// TestEmbeddedConcurrentUse runs writers and readers at once; -race checks the rest.
func TestEmbeddedConcurrentUse(t *testing.T) {
	t.Parallel()
	ix := openEmbedded(t)
	c := loadFixture(t, ix.Files())
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				doc := json.RawMessage(fmt.Sprintf(`{"id":"w%d-%d","type":"text/plain","size":%d,"mtime":%d,"read":{"text":"concurrent"}}`, w, i, i, i))
				if err := c.Upsert(ctxT(t), []json.RawMessage{doc}); err != nil {
					errs <- err
					return
				}
			}
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := c.Search(ctxT(t), Query{Q: "concurrent", Filter: `type = "text/plain"`, Sort: []string{"mtime:desc"}}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Go(func() {
		if err := ix.Chunks().Configure(ctxT(t), Settings{Filterable: []string{"file_id"}}); err != nil {
			errs <- err
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := search(t, c, Query{Q: "concurrent", Limit: 100}); len(got.Hits) != 80 {
		t.Errorf("got %d concurrent documents, want 80", len(got.Hits))
	}
}

// TestEmbeddedUpsertPages: one Upsert of more documents than one lookup page holds, some new
// and some replacing stored ones, one id twice, leaves each document as its last version, its
// old words gone from the text and its facets current.
func TestEmbeddedUpsertPages(t *testing.T) {
	t.Parallel()
	ix := openEmbedded(t)
	c := ix.Files()
	if err := c.Configure(ctxT(t), Settings{Filterable: []string{"size"}}); err != nil {
		t.Fatal(err)
	}
	doc := func(i int, word string, size int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"id":"p%04d","type":"text/plain","size":%d,"read":{"text":%q}}`, i, size, word))
	}
	n := upsertPage + upsertPage/2
	var first []json.RawMessage
	for i := range n / 2 {
		first = append(first, doc(i, "oldword", 1))
	}
	if err := c.Upsert(ctxT(t), first); err != nil {
		t.Fatal(err)
	}
	var second []json.RawMessage
	for i := range n {
		second = append(second, doc(i, "newword", 2))
	}
	second = append(second, doc(n-1, "lastword", 3)) // new in this call, twice
	if err := c.Upsert(ctxT(t), second); err != nil {
		t.Fatal(err)
	}
	if got := count(t, c); got != int64(n) {
		t.Errorf("count = %d, want %d", got, n)
	}
	for q, want := range map[string]int64{"oldword": 0, "newword": int64(n - 1), "lastword": 1} {
		if res := search(t, c, Query{Q: q, Limit: 1}); res.Total != want {
			t.Errorf("%s: %d hits, want %d", q, res.Total, want)
		}
	}
	if res := search(t, c, Query{Filter: "size = 2", Limit: 1}); res.Total != int64(n-1) {
		t.Errorf("size = 2: %d hits, want %d", res.Total, n-1)
	}
	if got, want := idSet(search(t, c, Query{Filter: "size = 3"})), fmt.Sprintf("p%04d", n-1); got != want {
		t.Errorf("size = 3: [%s], want [%s]", got, want)
	}
}
