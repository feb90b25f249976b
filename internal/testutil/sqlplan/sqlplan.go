// Package sqlplan reads SQLite's query plans in tests, so a test can assert that a query is
// answered through an index and never reads a whole table.
package sqlplan

import (
	"database/sql"
	"strings"
	"testing"
)

// Of returns the detail lines of EXPLAIN QUERY PLAN for query with args.
func Of(tb testing.TB, db *sql.DB, query string, args ...any) []string {
	tb.Helper()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			tb.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return plan
}

// Scans reports whether a plan reads a whole table or index ("SCAN …" rather than
// "SEARCH … USING INDEX").
func Scans(plan []string) bool {
	for _, p := range plan {
		if strings.HasPrefix(p, "SCAN ") {
			return true
		}
	}
	return false
}
