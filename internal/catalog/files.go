package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// File is one path row.
type File struct {
	Path    string
	DocID   string
	Dev     uint64
	Ino     uint64
	Size    int64
	MtimeNs int64
	Mtime   float64 // truncated to 4 decimals, as written in documents
	Drive   string  // "" when the path is on no archive drive
}

// Legacy reports whether the row came from a legacy metadata import and has no stat yet.
func (f File) Legacy() bool { return f.Ino == 0 && f.Dev == 0 && f.MtimeNs == 0 }

// Files calls fn for every file row, in byte order of path (the order of scanner.Walk), from
// one snapshot of the catalog.
func (c *Catalog) Files(ctx context.Context, fn func(File) error) error {
	rows, err := c.r.QueryContext(ctx, `SELECT path, doc_id, dev, ino, size, mtime_ns, mtime, coalesce(drive, '') FROM files ORDER BY path`)
	if err != nil {
		return fmt.Errorf("catalog: files: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var f File
		var dev, ino int64
		if err := rows.Scan(&f.Path, &f.DocID, &dev, &ino, &f.Size, &f.MtimeNs, &f.Mtime, &f.Drive); err != nil {
			return fmt.Errorf("catalog: files: %w", err)
		}
		f.Dev, f.Ino = uint64(dev), uint64(ino)
		if err := fn(f); err != nil {
			return err
		}
	}
	return rows.Err()
}

// CountFiles returns the number of path rows.
func (c *Catalog) CountFiles(ctx context.Context) (int64, error) {
	var n int64
	err := c.r.QueryRowContext(ctx, `SELECT count(*) FROM files`).Scan(&n)
	return n, err
}

// PutFile inserts or replaces a path row.
func (t *Tx) PutFile(ctx context.Context, f File) error {
	return t.PutFiles(ctx, []File{f})
}

// putFiles inserts or replaces path rows, a later row of a path replacing an earlier one.
var putFiles = newMultiRow(`INSERT INTO files(path, doc_id, dev, ino, size, mtime_ns, mtime, drive) VALUES `,
	`(?, ?, ?, ?, ?, ?, ?, nullif(?, ''))`,
	` ON CONFLICT(path) DO UPDATE SET doc_id=excluded.doc_id, dev=excluded.dev, ino=excluded.ino,
		size=excluded.size, mtime_ns=excluded.mtime_ns, mtime=excluded.mtime, drive=excluded.drive`, 8)

// PutFiles is PutFile for each row in turn, in fewer statements.
func (t *Tx) PutFiles(ctx context.Context, files []File) error {
	args := make([]any, 0, putFiles.width*len(files))
	for _, f := range files {
		args = append(args, f.Path, f.DocID, int64(f.Dev), int64(f.Ino), f.Size, f.MtimeNs, f.Mtime, f.Drive)
	}
	return putFiles.each(args, func(stmt string, args []any) error {
		if _, err := t.tx.ExecContext(ctx, stmt, args...); err != nil {
			return fmt.Errorf("catalog: put file %q: %w", args[0], err)
		}
		return nil
	})
}

// DeleteFile removes a path row. Missing is fine.
func (t *Tx) DeleteFile(ctx context.Context, path string) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM files WHERE path = ?`, path); err != nil {
		return fmt.Errorf("catalog: delete file %q: %w", path, err)
	}
	return nil
}

// SetFileDrive rewrites a row's drive (after ARCHIVE_DIRECTORY moved).
func (t *Tx) SetFileDrive(ctx context.Context, path, drive string) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE files SET drive = nullif(?, '') WHERE path = ?`, drive, path)
	return err
}

// DocPathCount returns how many paths a document has.
func (t *Tx) DocPathCount(ctx context.Context, id string) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM files WHERE doc_id = ?`, id).Scan(&n)
	return n, err
}

// FileDoc returns the doc id of a path inside the transaction.
func (t *Tx) FileDoc(ctx context.Context, path string) (string, bool, error) {
	var id string
	err := t.tx.QueryRowContext(ctx, `SELECT doc_id FROM files WHERE path = ?`, path).Scan(&id)
	if err == sql.ErrNoRows {
		return "", false, nil
	}
	return id, err == nil, err
}

// DriveDocIDs calls fn with every document id having a path on drive.
func (t *Tx) DriveDocIDs(ctx context.Context, drive string, fn func(id string) error) error {
	rows, err := t.tx.QueryContext(ctx, `SELECT DISTINCT doc_id FROM files WHERE drive = ?`, drive)
	if err != nil {
		return err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	for _, id := range ids {
		if err := fn(id); err != nil {
			return err
		}
	}
	return nil
}

// DrivePaths returns every path on drive, in order.
func (t *Tx) DrivePaths(ctx context.Context, drive string) ([]File, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT path, doc_id FROM files WHERE drive = ? ORDER BY path`, drive)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []File
	for rows.Next() {
		f := File{Drive: drive}
		if err := rows.Scan(&f.Path, &f.DocID); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// FileDoc returns the document id of a path.
func (c *Catalog) FileDoc(ctx context.Context, path string) (string, bool, error) {
	var id string
	err := c.r.QueryRowContext(ctx, `SELECT doc_id FROM files WHERE path = ?`, path).Scan(&id)
	if err == sql.ErrNoRows {
		return "", false, nil
	}
	return id, err == nil, err
}

// FileDocs returns the document of each of paths that has a file row (paths without one are
// absent from the map). Paths are bound as arguments, never through JSON (names
// are bytes), fileDocsChunk at a time; a short last chunk is padded with repeats so that every
// query has one of few shapes, each prepared once.
func (c *Catalog) FileDocs(ctx context.Context, paths []string) (map[string]string, error) {
	out := make(map[string]string, len(paths))
	for len(paths) > 0 {
		n := min(len(paths), fileDocsChunk)
		size := 8
		for size < n {
			size *= 2
		}
		args := make([]any, size)
		for i := range args {
			args[i] = paths[min(i, n-1)]
		}
		q := `SELECT path, doc_id FROM files WHERE path IN (?` + strings.Repeat(", ?", size-1) + `)`
		rows, err := c.r.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("catalog: file documents: %w", err)
		}
		for rows.Next() {
			var p, id string
			if err := rows.Scan(&p, &id); err != nil {
				rows.Close()
				return nil, err
			}
			out[p] = id
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		paths = paths[n:]
	}
	return out, nil
}

// fileDocsChunk is how many paths one FileDocs query takes (a power of two, under SQLite's
// variable limit).
const fileDocsChunk = 512
