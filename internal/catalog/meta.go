package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Meta keys.
const (
	MetaArchiveRel = "archive_rel" // ARCHIVE_DIRECTORY relative to INDEX_DIRECTORY at the last sync
	MetaImported   = "legacy_imported"
	MetaIndexName  = "index_backend" // which search backend the outbox last wrote to
)

// Meta reads a meta value ("" , false when unset).
func (c *Catalog) Meta(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := c.r.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("catalog: meta %s: %w", key, err)
	}
	return v, true, nil
}

// SetMeta writes a meta value.
func (t *Tx) SetMeta(ctx context.Context, key, value string) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}
