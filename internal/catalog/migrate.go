package catalog

import "database/sql"

// migrateTables rebuilds the tables whose layout changed since a catalog was made: the outbox
// became WITHOUT ROWID, and merges went from a row per merged result to a row per document
// and module. Each runs once, in one transaction, so a second process opening the catalog
// meanwhile finds either table whole.
func migrateTables(db *sql.DB) error {
	if err := rebuild(db, `SELECT count(*) FROM sqlite_schema WHERE name = 'outbox' AND sql LIKE '%WITHOUT ROWID'`,
		`CREATE TABLE outbox_new `+outboxTable,
		`INSERT INTO outbox_new SELECT key, seq, meta_done, index_done FROM outbox`,
		`DROP TABLE outbox`, // and its indexes
		`ALTER TABLE outbox_new RENAME TO outbox`,
		`CREATE INDEX outbox_pending ON outbox`+outboxPendingColumns,
	); err != nil {
		return err
	}
	return rebuild(db, `SELECT count(*) FROM pragma_table_info('merges') WHERE name = 'n'`,
		`CREATE TABLE merges_new `+mergesTable,
		// max(at) makes token the latest row's (SQLite's bare columns with max).
		`INSERT INTO merges_new(doc_id, module, token, at, n)
			SELECT doc_id, module, token, max(at), count(*) FROM merges GROUP BY doc_id, module`,
		`DROP TABLE merges`,
		`ALTER TABLE merges_new RENAME TO merges`,
	)
}

// rebuild runs steps in one write transaction unless current (a count) finds the table
// already in its current layout.
func rebuild(db *sql.DB, current string, steps ...string) error {
	tx, err := db.Begin() // BEGIN IMMEDIATE: the writer's _txlock
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRow(current).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	for _, q := range steps {
		if _, err := tx.Exec(q); err != nil {
			return err
		}
	}
	return tx.Commit()
}
