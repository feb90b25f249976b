package search

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// filesIndexes lists the files collection's expression indexes and how many of them have
// planner statistics.
func filesIndexes(t *testing.T, ix Index) (names []string, analyzed int) {
	t.Helper()
	w := ix.(*embeddedIndex).writer
	rows, err := w.Query(`SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE 'files_x_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	if err := w.QueryRow(`SELECT count(*) FROM sqlite_stat1 WHERE idx LIKE 'files_x_%'`).Scan(&analyzed); err != nil {
		analyzed = 0 // no sqlite_stat1 yet: nothing analyzed
	}
	return names, analyzed
}

// keptDuringLoad is the part of the files collection's indexes names that a first load keeps:
// the partial multi-value indexes (of filters, and of one-valued sorts) and the value indexes
// of loadKeptValues.
func keptDuringLoad(names []string) []string {
	var kept []string
	for _, n := range names {
		attr, _ := hex.DecodeString(n[len("files_x_v_"):])
		if strings.HasPrefix(n, "files_x_m_") || strings.HasPrefix(n, "files_x_km_") ||
			strings.HasPrefix(n, "files_x_v_") && slices.Contains(loadKeptValues, string(attr)) {
			kept = append(kept, n)
		}
	}
	return kept
}

// A first load writes documents with the files collection's per-file indexes dropped (sizes,
// dates, names, sorts) and those that cost a new document little kept (a Configure meanwhile,
// as the outbox runs before its first write, does not bring the others back),
// searches stay right through it, and end builds every index the settings call for, with
// planner statistics. A process that stops mid-load gets them at its next Configure.
func TestFirstLoadBuildsTheIndexesAtTheEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	raw, err := OpenEmbedded(path)
	if err != nil {
		t.Fatal(err)
	}
	raw.(*embeddedIndex).tableOff = true // every search through SQL, as in the CLI
	ix := WithFileDocuments(raw, "archive")
	settings := FileSettings(Settings{Filterable: []string{"size", "type"}, Sortable: []string{"size", "mtime"}})
	if err := ix.Files().Configure(ctx, settings); err != nil {
		t.Fatal(err)
	}
	want, _ := filesIndexes(t, raw)
	if len(want) == 0 {
		t.Fatal("no expression indexes after Configure: nothing to test")
	}

	end, err := BeginLoad(ctx, ix)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Files().Configure(ctx, settings); err != nil {
		t.Fatal(err)
	}
	var docs []json.RawMessage
	for i := range 300 {
		docs = append(docs, json.RawMessage(fmt.Sprintf(`{"id":"d%03d","size":%d,"mtime":%d,"type":"text/plain","paths":{"dir/f%03d.txt":%d}}`, i, i, 1000-i, i, 1000-i)))
	}
	// stats gives the planner statistics of the expression indexes, and the row count the id
	// index's statistics give the planner ("" before any).
	stats := func() (exprs, idRows string) {
		t.Helper()
		w := raw.(*embeddedIndex).writer
		if err := w.QueryRow(`SELECT coalesce(group_concat(idx || '=' || stat, ' '), '') FROM (SELECT idx, stat FROM sqlite_stat1 WHERE tbl = 'files_docs' AND idx LIKE 'files_x_%' ORDER BY idx)`).Scan(&exprs); err != nil {
			t.Fatal(err)
		}
		if err := w.QueryRow(`SELECT coalesce((SELECT substr(stat, 1, instr(stat, ' ') - 1) FROM sqlite_stat1 WHERE idx = ?), '')`, idIndex("files")).Scan(&idRows); err != nil {
			t.Fatal(err)
		}
		return exprs, idRows
	}
	before, _ := stats()
	// Written in pieces, more than analyzeMinWrites in all: the load's writes keep the planner
	// told of the table's size through the id index alone; the expression indexes it keeps are
	// analyzed at its end.
	var filler []json.RawMessage
	for i := range analyzeMinWrites {
		filler = append(filler, json.RawMessage(fmt.Sprintf(`{"id":"x%05d","size":-1,"type":"text/plain"}`, i)))
	}
	for _, part := range [][]json.RawMessage{filler[:analyzeMinWrites/2], filler[analyzeMinWrites/2:], docs} {
		if err := ix.Files().Upsert(ctx, part); err != nil {
			t.Fatal(err)
		}
	}
	if after, idRows := stats(); after != before || idRows != fmt.Sprint(analyzeMinWrites) {
		t.Errorf("during the load: expression index statistics %q, then %q (want unchanged); the id index's row count %q, want %d",
			before, after, idRows, analyzeMinWrites)
	}
	kept := keptDuringLoad(want)
	if len(kept) == 0 || len(kept) == len(want) {
		t.Fatalf("of the indexes %q a load keeps %q: nothing to test", want, kept)
	}
	if names, _ := filesIndexes(t, raw); fmt.Sprint(names) != fmt.Sprint(kept) {
		t.Fatalf("during the load the files collection has indexes %q, want %q", names, kept)
	}
	check := func(when string) {
		t.Helper()
		res, err := ix.Files().Search(ctx, Query{Filter: "size >= 297", Sort: []string{"size:desc"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := idList(res); got != "d299 d298 d297" || res.Total != 3 {
			t.Fatalf("%s: size >= 297 by size: hits %q (total %d), want d299 d298 d297", when, got, res.Total)
		}
		res, err = ix.Files().Search(ctx, Query{Sort: []string{"mtime:asc"}, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if got := idList(res); got != "d299 d298" || res.Total != 300+analyzeMinWrites {
			t.Fatalf("%s: oldest first: hits %q (total %d), want d299 d298 of %d", when, got, res.Total, 300+analyzeMinWrites)
		}
	}
	check("during the load")

	if err := end(ctx); err != nil {
		t.Fatal(err)
	}
	names, analyzed := filesIndexes(t, raw)
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("after the load: indexes %q, want %q", names, want)
	}
	if analyzed != len(want) {
		t.Errorf("after the load: %d of %d indexes have planner statistics", analyzed, len(want))
	}
	// The indexes built at the end were sampled, the kept ones read whole: either way each
	// statistic of an index over every row (not a partial one) counts them all. Later
	// ANALYZEs read whole again.
	w := raw.(*embeddedIndex).writer
	var wrong string
	if err := w.QueryRow(`SELECT coalesce(group_concat(idx || '=' || stat, ' '), '') FROM sqlite_stat1
		JOIN sqlite_schema ON type = 'index' AND name = idx
		WHERE tbl = 'files_docs' AND coalesce(sql, '') NOT LIKE '% WHERE %'
		AND CAST(stat AS INTEGER) != (SELECT count(*) FROM files_docs)`).Scan(&wrong); err != nil {
		t.Fatal(err)
	}
	if wrong != "" {
		t.Errorf("after the load: statistics that miscount the %d rows: %s", 300+analyzeMinWrites, wrong)
	}
	// The value indexes filters use keep their histograms (a sampled index gets none).
	var histograms string
	if err := w.QueryRow(`SELECT coalesce(group_concat(name, ' '), '') FROM (SELECT name FROM sqlite_schema
		WHERE type = 'index' AND name LIKE 'files_x_v_%' AND name NOT IN (SELECT idx FROM sqlite_stat4) ORDER BY name)`).Scan(&histograms); err != nil {
		t.Fatal(err)
	}
	if histograms != "" {
		t.Errorf("after the load: value indexes without a histogram (sqlite_stat4): %s", histograms)
	}
	var limit int
	if err := w.QueryRow(`PRAGMA analysis_limit`).Scan(&limit); err != nil || limit != 0 {
		t.Errorf("after the load: analysis_limit %d (%v), want 0: later statistics would be sampled", limit, err)
	}
	check("after the load")

	// A load the process never ended: the next start's Configure builds the indexes.
	if _, err := BeginLoad(ctx, ix); err != nil {
		t.Fatal(err)
	}
	if names, _ := filesIndexes(t, raw); fmt.Sprint(names) != fmt.Sprint(kept) {
		t.Fatalf("second load: indexes %q, want %q", names, kept)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err = OpenEmbedded(path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.(*embeddedIndex).tableOff = true
	ix = WithFileDocuments(raw, "archive")
	if err := ix.Files().Configure(ctx, settings); err != nil {
		t.Fatal(err)
	}
	if names, _ := filesIndexes(t, raw); fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("reopened after an unended load: indexes %q, want %q", names, want)
	}
	check("reopened")
}

// During a first load a document is inserted before its id is looked up; one whose id is
// stored already (written before the load, or earlier in it) is updated in place: its old
// words and facets are gone, and it is one document, through SQL and through the file table.
func TestFirstLoadUpdatesDocumentsItMeetsAgain(t *testing.T) {
	t.Parallel()
	for _, tableOff := range []bool{true, false} {
		t.Run(fmt.Sprintf("tableOff=%v", tableOff), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			raw, err := OpenEmbedded(filepath.Join(t.TempDir(), "index.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			raw.(*embeddedIndex).tableOff = tableOff
			ix := WithFileDocuments(raw, "archive")
			if err := ix.Files().Configure(ctx, FileSettings(Settings{Filterable: []string{"size"}})); err != nil {
				t.Fatal(err)
			}
			doc := func(id, name string, size int) json.RawMessage {
				return json.RawMessage(fmt.Sprintf(`{"id":%q,"size":%d,"type":"text/plain","paths":{"%s.txt":1}}`, id, size, name))
			}
			upsert := func(docs ...json.RawMessage) {
				t.Helper()
				if err := ix.Files().Upsert(ctx, docs); err != nil {
					t.Fatal(err)
				}
			}
			upsert(doc("a", "alpha", 1))
			end, err := BeginLoad(ctx, ix)
			if err != nil {
				t.Fatal(err)
			}
			upsert(doc("a", "bravo", 2), doc("b", "charlie", 3))
			upsert(doc("b", "delta", 5), doc("c", "echo", 7))
			check := func(when string) {
				t.Helper()
				for _, c := range []struct {
					q    Query
					want string
				}{
					{Query{Q: "alpha"}, ""}, {Query{Q: "bravo"}, "a"}, {Query{Q: "charlie"}, ""},
					{Query{Q: "delta"}, "b"}, {Query{Q: "echo"}, "c"},
					{Query{Filter: "size = 1"}, ""}, {Query{Filter: "size = 2"}, "a"},
					{Query{Filter: "size = 3"}, ""}, {Query{Filter: "size = 5"}, "b"},
					{Query{Sort: []string{"size:asc"}}, "a b c"},
				} {
					res, err := ix.Files().Search(ctx, c.q)
					if err != nil {
						t.Fatal(err)
					}
					if got := idList(res); got != c.want || res.Total != int64(len(strings.Fields(c.want))) {
						t.Errorf("%s: %+v: hits %q (total %d), want %q", when, c.q, got, res.Total, c.want)
					}
				}
			}
			check("during the load")
			if err := end(ctx); err != nil {
				t.Fatal(err)
			}
			check("after the load")
		})
	}
}
