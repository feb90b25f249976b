package catalog

import "strings"

// maxRowsPerStmt is the most rows one multi-row statement writes. A first sync writes a
// document, a path and two outbox rows per file: one statement for each was about a third of
// its catalog writes (SQLite opens its cursors and descends from each index's root per
// statement).
const maxRowsPerStmt = 32

// multiRow is one multi-row statement's texts for 1, 2, 4, … maxRowsPerStmt rows. Only powers
// of two are used, so a connection keeps six texts prepared (internal/sqlitedb caches a
// bounded number of statements).
type multiRow struct {
	width int // placeholders per row
	stmts map[int]string
}

// newMultiRow joins head, n copies of row (comma-separated) and tail; row has width
// placeholders.
func newMultiRow(head, row, tail string, width int) multiRow {
	m := multiRow{width: width, stmts: map[int]string{}}
	for n := 1; n <= maxRowsPerStmt; n *= 2 {
		m.stmts[n] = head + strings.Repeat(row+", ", n-1) + row + tail
	}
	return m
}

// each calls fn with the statement and arguments of each piece of args (rows of width values,
// in order), the largest pieces first.
func (m multiRow) each(args []any, fn func(stmt string, args []any) error) error {
	for rest := args; len(rest) > 0; {
		n := maxRowsPerStmt
		for n > len(rest)/m.width {
			n /= 2
		}
		if err := fn(m.stmts[n], rest[:m.width*n]); err != nil {
			return err
		}
		rest = rest[m.width*n:]
	}
	return nil
}
