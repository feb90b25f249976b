package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"github.com/homeindex/homeindex/internal/sqlitedb"
)

// Drives returns the last known presence of every drive the catalog knows.
func (c *Catalog) Drives(ctx context.Context) (map[string]bool, error) {
	return readDrives(ctx, c.r)
}

// ReadDrives returns Drives of the catalog at path, opened read-only for this one query: a
// command beside the running daemon reads what the daemon last recorded (WAL lets a reader
// in beside the writer), and changes nothing.
func ReadDrives(ctx context.Context, path string) (map[string]bool, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("catalog: drives: %w", err)
	}
	db := sqlitedb.Open("file:" + path + "?mode=ro&_pragma=busy_timeout(10000)")
	defer db.Close()
	return readDrives(ctx, db)
}

func readDrives(ctx context.Context, db *sql.DB) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT name, present FROM drives`)
	if err != nil {
		return nil, fmt.Errorf("catalog: drives: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		var present bool
		if err := rows.Scan(&name, &present); err != nil {
			return nil, err
		}
		out[name] = present
	}
	return out, rows.Err()
}

// SetDrivePresent records a drive's presence.
func (t *Tx) SetDrivePresent(ctx context.Context, name string, present bool) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO drives(name, present) VALUES(?, ?)
		ON CONFLICT(name) DO UPDATE SET present = excluded.present`, name, present)
	if err != nil {
		return fmt.Errorf("catalog: drive %s: %w", name, err)
	}
	return nil
}

// DeleteDrive forgets a drive no path references any more.
func (t *Tx) DeleteDrive(ctx context.Context, name string) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM drives WHERE name = ?`, name)
	return err
}

// DriveStatus is what the marker of a drive derives from.
type DriveStatus struct {
	Name       string
	Referenced bool // some path is on the drive
	Pending    bool // some document with a path on the drive has a non-empty next
}

// DriveStatus computes one drive's status.
func (c *Catalog) DriveStatus(ctx context.Context, name string) (DriveStatus, error) {
	s := DriveStatus{Name: name}
	err := c.r.QueryRowContext(ctx, `SELECT
		EXISTS(SELECT 1 FROM files WHERE drive = ?),
		EXISTS(SELECT 1 FROM files f JOIN documents d ON d.id = f.doc_id WHERE f.drive = ? AND d.next != '')`,
		name, name).Scan(&s.Referenced, &s.Pending)
	if err != nil {
		return s, fmt.Errorf("catalog: drive status %s: %w", name, err)
	}
	return s, nil
}

// ReferencedDrives lists drives named by at least one path.
func (c *Catalog) ReferencedDrives(ctx context.Context) ([]string, error) {
	return c.ids(ctx, `SELECT DISTINCT drive FROM files WHERE drive IS NOT NULL ORDER BY drive`)
}
