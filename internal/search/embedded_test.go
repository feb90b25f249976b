package search

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/homeindex/homeindex/internal/sqlitedb"
)

func openEmbedded(t *testing.T) Index {
	t.Helper()
	ix := openEmbeddedAt(t, filepath.Join(t.TempDir(), "index.db"))
	t.Cleanup(func() {
		if err := ix.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return ix
}

// openEmbeddedAt opens the index at path; reopenEmbedded closes it.
func openEmbeddedAt(t *testing.T, path string) Index {
	t.Helper()
	ix, err := OpenEmbedded(path)
	if err != nil {
		t.Fatalf("open embedded: %v", err)
	}
	return ix
}

// reopenEmbedded closes ix and opens the index at path again, its file table off (searches
// answered by SQL alone).
func reopenEmbedded(t *testing.T, ix Index, path string) Index {
	t.Helper()
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err := OpenEmbedded(path)
	if err != nil {
		t.Fatalf("reopen embedded: %v", err)
	}
	t.Cleanup(func() { ix.Close() })
	ix.(*embeddedIndex).tableOff = true
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

// ftsState returns a digest of the files full-text index's stored segments: it changes with
// every write to the FTS5 table and with nothing else.
func ftsState(t *testing.T, ix Index) string {
	t.Helper()
	var n, size int64
	var ids string
	err := ix.(*embeddedIndex).writer.QueryRow(
		`SELECT count(*), coalesce(sum(length(block)), 0), coalesce(group_concat(id), '') FROM files_fts_data`).Scan(&n, &size, &ids)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d blocks, %d bytes, ids %s", n, size, ids)
}

// The full text holds a document's words, not the chain's bookkeeping: a search for a module
// name finds no file because the file waits for that module, and booleans are no words.
func TestEmbeddedTextLeavesBookkeepingOut(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	files := openEmbedded(t).Files()
	docs := []json.RawMessage{
		json.RawMessage(`{"id":"a","next":"ocr","offline":false,"name":"holiday.jpg","media":{"rotated":true,"codec":"jpeg"}}`),
		json.RawMessage(`{"id":"b","next":"","name":"ocr notes.txt","pages":12}`),
	}
	if err := files.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"ocr": "b", "true": "", "false": "", "jpeg": "a", "holiday": "a", "12": "b"} {
		if got := idSet(search(t, files, Query{Q: q + " "})); got != want {
			t.Errorf("q %q: hits %q, want %q", q, got, want)
		}
	}
}

// The full-text index is given each value once: a file's name and its sort name (the name in
// lower case), and its path in paths_list and in path_entries, are written once, and a search
// still finds the document by each of them.
func TestEmbeddedTextHoldsEachValueOnce(t *testing.T) {
	t.Parallel()
	doc := map[string]any{"id": "a", "name": "Été.jpg", "sort_name": "été.jpg", "mtime": 17.5,
		"paths_list": []any{"Photos/Été.jpg"}, "path_entries": []any{map[string]any{"path": "Photos/Été.jpg", "mtime": 17.5}},
		"copies": float64(1), "version": float64(1), "camera": "X100"}
	if got, want := searchText(doc), "X100\n1\na\n17.5\nÉté.jpg\nPhotos/Été.jpg\n"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	// Past the values textSeen lists, it keeps a set: 40 distinct values, each twice.
	many := map[string]any{}
	var want strings.Builder
	for i := range 40 {
		many[fmt.Sprintf("k%02d", i)] = []any{fmt.Sprintf("v%02d", i), fmt.Sprintf("v%02d", i)}
		fmt.Fprintf(&want, "v%02d\n", i)
	}
	if got := searchText(many); got != want.String() {
		t.Errorf("text of 40 values twice: %q, want %q", got, want.String())
	}

	files := openEmbedded(t).Files()
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := files.Upsert(t.Context(), []json.RawMessage{raw}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"ete", "photos", "x100", "17"} {
		if got := idSet(search(t, files, Query{Q: q})); got != "a" {
			t.Errorf("q %q: hits %q, want a", q, got)
		}
	}
}

// An update whose text is unchanged (a module hop that adds no words) leaves the full-text
// index untouched; one that changes the text replaces the old words with the new.
func TestEmbeddedUpsertRewritesTextOnlyWhenItChanged(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ix := openEmbedded(t)
	files := ix.Files()
	if err := files.Configure(ctx, Settings{Filterable: []string{"next", "size"}}); err != nil {
		t.Fatal(err)
	}
	upsert(t, files, `{"id":"a","next":"m1","size":5,"name":"sunset.jpg","exif":{"model":"X100","iso":200}}`,
		`{"id":"b","next":"m1","size":6,"name":"notes.txt"}`)
	before := ftsState(t, ix)

	// Next moves, a boolean and a facet change, keys come in another order: same text.
	upsert(t, files, `{"exif":{"iso":200,"model":"X100"},"name":"sunset.jpg","size":5,"id":"a","next":"","noop":true}`,
		`{"id":"b","next":"","size":6,"name":"notes.txt","noop":true}`)
	if after := ftsState(t, ix); after != before {
		t.Errorf("full-text index rewritten for unchanged text: %s, then %s", before, after)
	}
	if got := idSet(search(t, files, Query{Filter: `next = "m1"`})); got != "" {
		t.Errorf(`next = "m1": %q, want none (the document rows must still be updated)`, got)
	}
	if got := idSet(search(t, files, Query{Q: "x100"})); got != "a" {
		t.Errorf("x100: %q, want a", got)
	}

	// A changed word is a changed text.
	upsert(t, files, `{"id":"a","next":"","size":5,"name":"sunset.jpg","exif":{"model":"X200","iso":200}}`)
	if after := ftsState(t, ix); after == before {
		t.Error("full-text index not written for a changed text")
	}
	if got := idSet(search(t, files, Query{Q: "x100"})); got != "" {
		t.Errorf("x100 after the change: %q, want none", got)
	}
	if got := idSet(search(t, files, Query{Q: "x200"})); got != "a" {
		t.Errorf("x200: %q, want a", got)
	}
}

// An upsert writes only the facet columns whose values changed: the JSONB the index encodes
// (facetBlobs) compares equal to what it stored, including for rows SQLite's jsonb() wrote.
func TestEmbeddedUpsertWritesOnlyChangedFacetColumns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ix := openEmbedded(t)
	files := ix.Files()
	if err := files.Configure(ctx, Settings{Filterable: []string{"next", "size", "tags"}, Sortable: []string{"name"}}); err != nil {
		t.Fatal(err)
	}
	db := ix.(*embeddedIndex).writer
	upsert := func(doc string) {
		t.Helper()
		if err := files.Upsert(ctx, []json.RawMessage{json.RawMessage(doc)}); err != nil {
			t.Fatal(err)
		}
	}
	upsert(`{"id":"a","next":"m1","size":5,"name":"Sunset \"é\".jpg","tags":["x","y\n",3.5]}`)
	// "UPDATE OF" fires for every column an UPDATE assigns, changed or not.
	if _, err := db.ExecContext(ctx, `CREATE TABLE written(col TEXT)`); err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"next", "size", "tags", "name"} {
		if _, err := db.ExecContext(ctx, fmt.Sprintf(`CREATE TRIGGER "w_%s" AFTER UPDATE OF %s ON files_docs BEGIN INSERT INTO written VALUES ('%s'); END`,
			col, facetColumn(col), col)); err != nil {
			t.Fatal(err)
		}
	}
	written := func() string {
		t.Helper()
		var cols string
		if err := db.QueryRowContext(ctx, `SELECT coalesce(group_concat(col, ','), '') FROM (SELECT col FROM written ORDER BY col)`).Scan(&cols); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `DELETE FROM written`); err != nil {
			t.Fatal(err)
		}
		return cols
	}
	upsert(`{"id":"a","next":"","size":5,"name":"Sunset \"é\".jpg","tags":["x","y\n",3.5]}`)
	if got := written(); got != "next" {
		t.Errorf("a change of next wrote the columns %q, want next alone", got)
	}
	// Stored by SQLite's jsonb(), as versions before facetBlobs did: still equal.
	for _, col := range []string{"size", "tags", "name"} {
		if _, err := db.ExecContext(ctx, `UPDATE files_docs SET `+facetColumn(col)+` = jsonb(json(`+facetColumn(col)+`))`); err != nil {
			t.Fatal(err)
		}
	}
	written()
	upsert(`{"id":"a","next":"m2","size":5,"name":"Sunset \"é\".jpg","tags":["x","y\n",3.5]}`)
	if got := written(); got != "next" {
		t.Errorf("over columns jsonb() wrote, a change of next wrote %q, want next alone", got)
	}
	upsert(`{"id":"a","next":"m2","size":6,"name":"Sunset \"é\".jpg","tags":["x",3.5]}`)
	if got := written(); got != "size,tags" {
		t.Errorf("a change of size and tags wrote %q", got)
	}
	for filter, want := range map[string]string{`size = 6`: "a", `tags = "x"`: "a", `tags = 3.5`: "a", `next = "m2"`: "a", `size = 5`: ""} {
		if got := idSet(search(t, files, Query{Filter: filter})); got != want {
			t.Errorf("%s: %q, want %q", filter, got, want)
		}
	}
}

// Settings changed between an upsert's preparation (outside the writer's lock) and its write
// are the ones the write uses: the document's facets are computed again for them, whether it
// was parsed or, as PrepareFile's output, prepared from its bytes (prepareRaw).
func TestUpsertPreparedWithStaleSettings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files func(Index) Collection
		raw   bool
	}{{"parsed", Index.Files, false}, {"from bytes", func(ix Index) Collection { return WithFileDocuments(ix, "archive").Files() }, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ix := openEmbedded(t)
			ctx := context.Background()
			files := tc.files(ix)
			if err := files.Configure(ctx, Settings{Filterable: []string{"size"}}); err != nil {
				t.Fatal(err)
			}
			u, err := PrepareUpsert(files, []json.RawMessage{json.RawMessage(`{"id":"d1","size":7,"camera_model":"X100"}`)})
			if err != nil {
				t.Fatal(err)
			}
			eu, ok := u.(*embeddedUpsert)
			if !ok {
				t.Fatalf("the embedded collection prepared a %T, want its own preparation", u)
			}
			if fromBytes := eu.prepared[0].value == nil; fromBytes != tc.raw {
				t.Fatalf("prepared from its bytes: %v, want %v", fromBytes, tc.raw)
			}
			if err := files.Configure(ctx, Settings{Filterable: []string{"size", "camera_model"}}); err != nil {
				t.Fatal(err)
			}
			if err := u.Write(ctx); err != nil {
				t.Fatal(err)
			}
			r, err := files.Search(ctx, Query{Filter: `camera_model = "X100"`})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Hits) != 1 {
				t.Fatalf("filter on the attribute made filterable during the upsert: %d hits, want 1", len(r.Hits))
			}
		})
	}
}

// A facet column leaves out the flags of a path that only has its one value. Rows written
// before that, whose columns hold {"f:P": 1} beside the value, answer every filter as the
// rows written now do; and the next upsert of such a row rewrites the column in the new form.
func TestEmbeddedFlagsKeyOfASingleValue(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ix := openEmbedded(t)
	files := ix.Files()
	if err := files.Configure(ctx, Settings{Filterable: []string{"size", "tags"}}); err != nil {
		t.Fatal(err)
	}
	docs := []string{`{"id":"one","size":5}`, `{"id":"old","size":5}`, `{"id":"none"}`, `{"id":"nul","size":null}`,
		`{"id":"many","size":[5,6]}`, `{"id":"empty","size":""}`}
	for _, d := range docs {
		if err := files.Upsert(ctx, []json.RawMessage{json.RawMessage(d)}); err != nil {
			t.Fatal(err)
		}
	}
	db := ix.(*embeddedIndex).writer
	column := func(id string) string {
		t.Helper()
		var col sql.NullString
		if err := db.QueryRowContext(ctx, `SELECT json(`+facetColumn("size")+`) FROM files_docs WHERE id = ?`, id).Scan(&col); err != nil {
			t.Fatal(err)
		}
		return col.String
	}
	if got := column("one"); got != `{"v:size":5}` {
		t.Fatalf("one value's column = %s, want no flags key", got)
	}
	if _, err := db.ExecContext(ctx, `UPDATE files_docs SET `+facetColumn("size")+` = jsonb('{"f:size":1,"v:size":5}') WHERE id = 'old'`); err != nil {
		t.Fatal(err)
	}
	for filter, want := range map[string]string{
		`size EXISTS`:                 "empty many nul old one",
		`size NOT EXISTS`:             "none",
		`NOT (size EXISTS)`:           "none",
		`size IS NULL`:                "nul",
		`size IS NOT NULL`:            "empty many none old one",
		`size IS EMPTY`:               "empty",
		`size IS NOT EMPTY`:           "many none nul old one",
		`size = 5`:                    "many old one",
		`size != 5`:                   "empty none nul",
		`size EXISTS AND size 4 TO 5`: "many old one",
	} {
		if got := idSet(search(t, files, Query{Filter: filter})); got != want {
			t.Errorf("%s: [%s], want [%s]", filter, got, want)
		}
	}
	if err := files.Upsert(ctx, []json.RawMessage{json.RawMessage(`{"id":"old","size":5,"tags":["x"]}`)}); err != nil {
		t.Fatal(err)
	}
	if got := column("old"); got != `{"v:size":5}` {
		t.Errorf("after an upsert the old row's column = %s, want %s", got, `{"v:size":5}`)
	}
}

// The writer and the readers checkpoint the write-ahead log at sqlitedb.WALCheckpointPages,
// not SQLite's 1000 pages.
func TestEmbeddedCheckpointsAtTheSharedLogSize(t *testing.T) {
	t.Parallel()
	ix := openEmbedded(t).(*embeddedIndex)
	for name, db := range map[string]*sql.DB{"writer": ix.writer, "reader": ix.reader} {
		var pages int
		if err := db.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if pages != sqlitedb.WALCheckpointPages {
			t.Errorf("%s: wal_autocheckpoint = %d, want %d", name, pages, sqlitedb.WALCheckpointPages)
		}
	}
}
