package search

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/sqlitedb"
	"github.com/homeindex/homeindex/internal/testutil/proccpu"
)

// BenchmarkFirstLoadVsSQLiteFloor100k: the files index's part of a first sync of 100k new
// files (BeginLoad, the outbox's upserts in rounds of 1,000 documents as it renders them,
// then end, which builds the deferred indexes and the planner statistics) against, in the
// same run, the least any SQLite index with full text writes for the same documents: one row
// each (a rowid, the unique id, the prepared document) and one contentless FTS5 entry of
// its search text, with the index's pragmas and the same transactions. Both are measured
// as this process's CPU per document.
//
// The floor is what the embedded backend could not go below however it were written; the
// ratio is what its facets, its filter and sort indexes and its document preparation add.
// The issue about the sync's speed reads this beside scripts/bench-sync.sh: its goal leaves
// the search index (and the catalog) a budget per file smaller than this floor.
func BenchmarkFirstLoadVsSQLiteFloor100k(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	docs := hopDocs(n, false)
	// The floor writes what the index stores: the prepared document and its search text.
	prepared := make([]json.RawMessage, n)
	texts := make([]string, n)
	ids := make([]string, n)
	for i, d := range docs {
		p, err := PrepareFile(d, "archive")
		if err != nil {
			b.Fatal(err)
		}
		pd, problem := parseDoc(i, p, false)
		if problem != "" {
			b.Fatal(problem)
		}
		prepared[i], texts[i], ids[i] = p, searchText(pd.value), pd.id
	}
	var indexCPU, floorCPU time.Duration
	for b.Loop() {
		b.StopTimer()
		ix, files := openHopIndex(b)
		floor := openSQLiteFloor(b, filepath.Join(b.TempDir(), "floor.db"))
		b.StartTimer()

		cpu0 := proccpu.Used()
		end, err := BeginLoad(ctx, ix)
		if err != nil {
			b.Fatal(err)
		}
		for chunk := range slices.Chunk(docs, 1000) {
			if err := files.Upsert(ctx, chunk); err != nil {
				b.Fatal(err)
			}
		}
		if err := end(ctx); err != nil {
			b.Fatal(err)
		}
		cpu1 := proccpu.Used()
		writeSQLiteFloor(b, floor, ids, prepared, texts, 1000)
		cpu2 := proccpu.Used()
		indexCPU += cpu1 - cpu0
		floorCPU += cpu2 - cpu1

		b.StopTimer()
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
		if err := floor.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	perDoc := func(d time.Duration) float64 { return d.Seconds() / float64(b.N) / n * 1e6 }
	b.ReportMetric(perDoc(indexCPU), "index-cpu-µs/doc")
	b.ReportMetric(perDoc(floorCPU), "floor-cpu-µs/doc")
	b.ReportMetric(float64(indexCPU)/float64(floorCPU), "index/floor")
}

// openSQLiteFloor opens a database with the embedded index's pragmas holding the least an
// index with full text needs: a row per document and a contentless FTS5 table.
func openSQLiteFloor(b *testing.B, path string) *sql.DB {
	b.Helper()
	dsn, _, err := embeddedDSNs(path)
	if err != nil {
		b.Fatal(err)
	}
	db := sqlitedb.Open(dsn) // the embedded index writer's pragmas
	db.SetMaxOpenConns(1)
	for _, s := range []string{
		`CREATE TABLE docs (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL)`,
		`CREATE VIRTUAL TABLE fts USING fts5(text, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')`,
	} {
		if _, err := db.Exec(s); err != nil {
			b.Fatal(err)
		}
	}
	return db
}

// writeSQLiteFloor inserts each document's row and FTS entry, batch documents per
// transaction, as plain statements the connection keeps prepared.
func writeSQLiteFloor(b *testing.B, db *sql.DB, ids []string, docs []json.RawMessage, texts []string, batch int) {
	b.Helper()
	for lo := 0; lo < len(ids); lo += batch {
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		for i := lo; i < min(lo+batch, len(ids)); i++ {
			res, err := tx.Exec(`INSERT INTO docs(id, doc) VALUES (?, ?)`, ids[i], docs[i])
			if err != nil {
				b.Fatal(err)
			}
			seq, err := res.LastInsertId()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tx.Exec(`INSERT INTO fts(rowid, text) VALUES (?, ?)`, seq, texts[i]); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}
