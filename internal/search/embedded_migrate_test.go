package search

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/sqlitedb"
)

// An index written before the facet columns (one "flat" column and expression indexes over it)
// opens with its documents, settings and text intact: facets are recomputed from the stored
// documents into per-attribute columns, and filters, sorts and text search work at once.
func TestEmbeddedMigratesFlatColumn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	old := sqlitedb.Open("file:" + path)
	for _, stmt := range []string{
		`CREATE TABLE settings (collection TEXT PRIMARY KEY, value TEXT NOT NULL)`,
		`CREATE TABLE files_docs (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL, flat BLOB NOT NULL)`,
		`CREATE VIRTUAL TABLE files_fts USING fts5(text, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')`,
		`INSERT INTO settings VALUES ('files', '{"Filterable":["size","type"],"Sortable":["size"]}')`,
		`INSERT INTO files_docs VALUES (1, 'a', '{"id":"a","size":5,"type":"image/png","name":"sunset"}', jsonb('{"v:size":5}'))`,
		`INSERT INTO files_docs VALUES (2, 'b', '{"id":"b","size":9,"type":"text/plain","name":"notes"}', jsonb('{"v:size":9}'))`,
		`INSERT INTO files_docs VALUES (3, 'c', '{"id":"c","size":7,"type":"image/png","name":"beach"}', jsonb('{"v:size":7}'))`,
		`INSERT INTO files_fts(rowid, text) VALUES (1, 'a sunset'), (2, 'b notes'), (3, 'c beach')`,
		`CREATE INDEX files_x_v_73697a65 ON files_docs(json_extract(flat, '$."v:size"'))`,
	} {
		if _, err := old.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	old.Close()

	ix, err := OpenEmbedded(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if up := Upgrades(ix); len(up) != 1 || !strings.HasPrefix(up[0], "files: one facet column per attribute in place of the flat column (3 documents, ") {
		t.Errorf("upgrades %q, want the flat column's migration of 3 documents", up)
	}
	res, err := ix.Files().Search(ctx, Query{Filter: `type = "image/png" AND size > 4`, Sort: []string{"size:desc"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := idList(res); got != "c a" {
		t.Fatalf("hits %q, want \"c a\"", got)
	}
	if res, err = ix.Files().Search(ctx, Query{Q: "notes"}); err != nil || len(res.Hits) != 1 {
		t.Fatalf("text search after migration: %v %v", res, err)
	}
	// The old column is gone and a later update touches the new columns.
	var n int
	db := ix.(*embeddedIndex).writer
	if err := db.QueryRow(`SELECT count(*) FROM pragma_table_info('files_docs') WHERE name = 'flat'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("flat column still there (%d, %v)", n, err)
	}
	if err := ix.Files().Upsert(ctx, []json.RawMessage{json.RawMessage(`{"id":"a","size":1,"type":"text/plain"}`)}); err != nil {
		t.Fatal(err)
	}
	if res, err = ix.Files().Search(ctx, Query{Filter: `type = "image/png"`}); err != nil || len(res.Hits) != 1 {
		t.Fatalf("after update: %d hits, %v; want 1", len(res.Hits), err)
	}
	// Its rows had no text hash: the update wrote the text again, the old words are gone.
	if res, err = ix.Files().Search(ctx, Query{Q: "sunset"}); err != nil || len(res.Hits) != 0 {
		t.Fatalf("old words after update: %d hits, %v; want 0", len(res.Hits), err)
	}
	if res, err = ix.Files().Search(ctx, Query{Q: "plain"}); err != nil || len(res.Hits) != 1 {
		t.Fatalf("new words after update: %d hits, %v; want 1", len(res.Hits), err)
	}
}

// The files collection keeps only the filter indexes of tableFilters and the sort indexes of
// tableSorts (its file table filters and sorts in memory): an index written with a filter
// index per attribute and a sort index per sortable attribute loses the others when it is
// configured with unchanged settings, and filters and sorts still answer the same, by SQL alone.
func TestEmbeddedFilesDropsIndexesTheTableReplaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	ix := openEmbeddedAt(t, path)
	settings := Settings{Filterable: []string{"type", "size"}, Sortable: []string{"size", "mtime"}}
	if err := ix.Files().Configure(ctx, settings); err != nil {
		t.Fatal(err)
	}
	docs := []json.RawMessage{
		json.RawMessage(`{"id":"a","size":5,"mtime":3,"type":"image/png"}`),
		json.RawMessage(`{"id":"b","size":9,"mtime":2,"type":"text/plain"}`),
		json.RawMessage(`{"id":"c","size":7,"mtime":1,"type":"image/png"}`),
	}
	if err := ix.Files().Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	// What an earlier version left: filter indexes and a sort index on mtime.
	c := ix.(*embeddedIndex).files
	writer := ix.(*embeddedIndex).writer
	old := []string{c.indexName("v", "type"), c.indexName("m", "type"), c.indexName("a", "mtime"),
		c.indexName(sortDesc, "size")} // size is one-valued: its ascending index serves both orders
	for _, n := range old {
		if _, err := writer.Exec(fmt.Sprintf(`CREATE INDEX %q ON files_docs(seq)`, n)); err != nil {
			t.Fatal(err)
		}
	}
	// And the sort indexes of versions whose sort keys were stored for single values too.
	for _, n := range []string{c.indexName(sortAsc, "size"), c.indexName(sortDesc, "size")} {
		if _, err := writer.Exec(fmt.Sprintf(`DROP INDEX IF EXISTS %q`, n)); err != nil {
			t.Fatal(err)
		}
	}
	x := `json_extract("f:size", '$."<:size"')`
	if _, err := writer.Exec(fmt.Sprintf(`CREATE INDEX %q ON files_docs(%s IS NULL, %s)`, c.indexName("a", "size"), x, x)); err != nil {
		t.Fatal(err)
	}
	x = `json_extract("f:size", '$.">:size"')`
	if _, err := writer.Exec(fmt.Sprintf(`CREATE INDEX %q ON files_docs(%s IS NULL, typeof(%s) = 'text', %s DESC)`, c.indexName("d", "size"), x, x, x)); err != nil {
		t.Fatal(err)
	}
	ix = reopenEmbedded(t, ix, path)
	if err := ix.Files().Configure(ctx, settings); err != nil {
		t.Fatal(err)
	}
	names, _ := filesIndexes(t, ix)
	if want := sizeIndexes(ix); !slices.Equal(names, want) {
		t.Fatalf("indexes %q, want only the size filter and sort indexes %q", names, want)
	}
	for _, tc := range []struct{ filter, sort, want string }{
		{`type = "image/png"`, "size:desc", "c a"},
		{"size > 4", "mtime:asc", "c b a"},
		{"", "size:asc", "a c b"},
	} {
		q := Query{Filter: tc.filter}
		if tc.sort != "" {
			q.Sort = []string{tc.sort}
		}
		res, err := ix.Files().Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if got := idList(res); got != tc.want {
			t.Errorf("filter %q sort %s: hits %q, want %q", tc.filter, tc.sort, got, tc.want)
		}
	}
}

// sizeIndexes names, sorted, the indexes of the files collection of ix when size alone is
// filterable and sortable: its value and multi-value filter indexes, its ascending sort index,
// and the partial index of its documents with several values (sortMulti).
func sizeIndexes(ix Index) []string {
	c := ix.(*embeddedIndex).files
	want := []string{c.indexName("m", "size"), c.indexName(sortAsc, "size"), c.indexName(sortMulti, "size"), c.indexName("v", "size")}
	slices.Sort(want)
	return want
}
