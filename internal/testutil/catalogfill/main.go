// Command catalogfill writes synthetic documents into a catalog for tests that need a large
// collection (the /metrics series count at 100k documents). Tests build and run it as a
// separate binary without the race detector: SQLite (a Go translation of C) inserts about 50
// times slower under it, and the fixture is not what those tests examine.
//
// Usage: catalogfill -db STATE/catalog.db [-n 100000] [-pending-every 20] [-module ocr]
// [-drive-files 2000] [-drives 8]
//
// Document i has id printf('%016x', i); every pending-every-th waits for -module, the rest are
// done. The first drive-files documents have their one path on drive<i / (drive-files/drives)>
// (even drives present), the others under dirNNN/. Keys are written in order, which keeps the
// B-trees cheap to build. The catalog must exist (its schema is made by catalog.Open).
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"os"

	_ "modernc.org/sqlite"
)

func main() {
	db := flag.String("db", "", "catalog database file")
	n := flag.Int("n", 100_000, "documents")
	every := flag.Int("pending-every", 20, "every how many documents one waits for -module")
	module := flag.String("module", "ocr", "module pending documents wait for")
	driveFiles := flag.Int("drive-files", 2_000, "documents whose path is on a drive")
	drives := flag.Int("drives", 8, "drives")
	flag.Parse()
	if err := fill(*db, *n, *every, *module, *driveFiles, *drives); err != nil {
		fmt.Fprintln(os.Stderr, "catalogfill:", err)
		os.Exit(1)
	}
}

func fill(path string, n, every int, module string, driveFiles, drives int) error {
	if path == "" || n < 1 || every < 1 || drives < 1 || driveFiles > n {
		return fmt.Errorf("bad arguments")
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return err
	}
	defer db.Close()
	perDrive := max(driveFiles/drives, 1)
	stmts := []string{
		fmt.Sprintf(`INSERT INTO documents(id, type, size, next, fields, version, retired)
			WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < %d)
			SELECT printf('%%016x', i), 'text/plain', 1, CASE WHEN i %% %d = 0 THEN '%s' ELSE '' END, '{}', 1, 0 FROM c`,
			n-1, every, module),
		fmt.Sprintf(`INSERT INTO files(path, doc_id, dev, ino, size, mtime_ns, mtime, drive)
			WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < %d)
			SELECT CASE WHEN i < %d THEN printf('archive/drive%%d/file-%%08d.txt', i / %d, i) ELSE printf('dir%%05d/file-%%08d.txt', i / 200, i) END,
				printf('%%016x', i), 1, i + 1, 1, 1, 1, CASE WHEN i < %d THEN printf('drive%%d', i / %d) END FROM c`,
			n-1, driveFiles, perDrive, driveFiles, perDrive),
	}
	for d := range drives {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO drives(name, present) VALUES ('drive%d', %d)`, d, 1-d%2))
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			return err
		}
	}
	return nil
}
