package catalog

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Outbox key kinds.
const (
	KeyDoc   = "doc:"
	KeyPath  = "path:"
	KeyDrive = "drive:"
	// KeyChunks ("chunks:<id>/<module>") re-chunks a module's content.json into chunks.json and
	// the chunk index.
	KeyChunks = "chunks:"
)

// ChunksKey builds the chunks outbox key.
func ChunksKey(id, module string) string { return KeyChunks + id + "/" + module }

// ParseChunksKey splits a chunks outbox key into its document and module.
func ParseChunksKey(key string) (id, module string, ok bool) {
	rest, ok := strings.CutPrefix(key, KeyChunks)
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, "/")
}

// DocKey, PathKey and DriveKey build outbox keys.
func DocKey(id string) string     { return KeyDoc + id }
func PathKey(rel string) string   { return KeyPath + rel }
func DriveKey(name string) string { return KeyDrive + name }

// Dirty marks keys as needing their derived state rewritten. Path and drive keys have no index
// part, so they start index_done.
func (t *Tx) Dirty(ctx context.Context, keys ...string) error {
	return t.dirty(ctx, true, keys...)
}

// DirtyNew is Dirty for the keys of a document InsertDocuments has just created with
// row.LocalPath, whose one path row f PutFiles has just written: its dispatch order is stored
// already, so it is not looked up again, and the document is handed to the outbox applier as
// these rows make it (handoff.go), so the applier need not read it back.
func (t *Tx) DirtyNew(ctx context.Context, row DocRow, f File) error {
	if err := t.dirty(ctx, false, DocKey(row.ID), PathKey(f.Path)); err != nil {
		return err
	}
	if len(row.Fields) == 0 && !row.Retired && f.Drive == "" && f.DocID == row.ID && f.Path == row.LocalPath {
		t.handing.add(handed{docSeq: t.seq - 1, size: row.Size, version: row.Version, mtime: f.Mtime},
			row.ID, f.Path, row.Type, row.Next)
	}
	return nil
}

// seqQuery is where a transaction's seqs start: past every seq ever given, the outbox's
// highest and the one recorded in meta (metaOutboxSeq), which stays when the outbox empties.
// A seq is never given twice, so the applier can tell a handed document's change by it.
const seqQuery = `SELECT max(coalesce((SELECT max(seq) FROM outbox), 0),
	coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = '` + metaOutboxSeq + `'), 0))`

// metaOutboxSeq is the meta key holding the highest outbox seq given.
const metaOutboxSeq = "outbox_seq"

// dirty is Dirty; refresh=false skips recomputing a document's dispatch order, for changes
// that touch none of its paths (a merge, a park). The rows are written at commit
// (flushDirty): nothing in a transaction reads the outbox back.
func (t *Tx) dirty(ctx context.Context, refresh bool, keys ...string) error {
	for _, k := range keys {
		if t.seq == 0 {
			if err := t.tx.QueryRowContext(ctx, seqQuery).Scan(&t.seq); err != nil {
				return fmt.Errorf("catalog: outbox seq: %w", err)
			}
		}
		t.seq++
		indexDone := !strings.HasPrefix(k, KeyDoc) && !strings.HasPrefix(k, KeyChunks)
		if id, ok := strings.CutPrefix(k, KeyDoc); ok && refresh {
			if err := t.refreshDispatch(ctx, id); err != nil {
				return err
			}
		}
		t.dirtied = append(t.dirtied, k, t.seq, indexDone)
	}
	return nil
}

// dirtyRows writes outbox rows, a later row of a key replacing an earlier one.
var dirtyRows = newMultiRow(`INSERT INTO outbox(key, seq, meta_done, index_done) VALUES `, `(?, ?, 0, ?)`,
	` ON CONFLICT(key) DO UPDATE SET seq = excluded.seq, meta_done = 0, index_done = excluded.index_done`, 3)

// flushDirty writes the keys dirty gathered, in the order they were dirtied, and records the
// highest seq given.
func (t *Tx) flushDirty(ctx context.Context) error {
	if len(t.dirtied) == 0 {
		return nil
	}
	if err := t.SetMeta(ctx, metaOutboxSeq, strconv.FormatInt(t.seq, 10)); err != nil {
		return fmt.Errorf("catalog: record outbox seq: %w", err)
	}
	err := dirtyRows.each(t.dirtied, func(stmt string, args []any) error {
		if _, err := t.tx.ExecContext(ctx, stmt, args...); err != nil {
			return fmt.Errorf("catalog: dirty %q: %w", args[0], err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	t.dirtied = t.dirtied[:0]
	return nil
}

// OutboxEntry is one pending key.
type OutboxEntry struct {
	Key       string
	Seq       int64
	MetaDone  bool
	IndexDone bool
}

// pendingOutboxQuery and outboxDoneRange read and delete keys by seq, from outbox_pending alone.
const (
	pendingOutboxQuery = `SELECT key, seq, meta_done, index_done FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?`
	outboxDoneRange    = `DELETE FROM outbox WHERE seq BETWEEN ? AND ?`
)

// PendingOutbox returns up to limit entries in seq order, starting after seq `after`.
func (c *Catalog) PendingOutbox(ctx context.Context, after int64, limit int) ([]OutboxEntry, error) {
	rows, err := c.r.QueryContext(ctx, pendingOutboxQuery, after, limit)
	if err != nil {
		return nil, fmt.Errorf("catalog: outbox: %w", err)
	}
	defer rows.Close()
	var out []OutboxEntry
	for rows.Next() {
		var e OutboxEntry
		if err := rows.Scan(&e.Key, &e.Seq, &e.MetaDone, &e.IndexDone); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// OutboxLen returns how many keys are pending, and how many of them still wait for the index.
func (c *Catalog) OutboxLen(ctx context.Context) (total, index int64, err error) {
	err = c.r.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(index_done = 0), 0) FROM outbox`).Scan(&total, &index)
	return total, index, err
}

// OutboxDone records that an entry's metadata and/or index part was applied. It only touches
// a row whose seq is unchanged (a newer change must be applied again): a fully done row is
// deleted, another gets its flags.
//
// entries are what successive PendingOutbox calls returned, in order, none left out (with
// their flags set): every row whose seq lies between two of them was among them. So a run of
// fully done entries is deleted by its seq range, one statement for a whole round of a first
// sync; a row dirtied again since was given a seq above every one read, and stays.
func (c *Catalog) OutboxDone(ctx context.Context, entries []OutboxEntry) error {
	for i := 1; i < len(entries); i++ {
		if entries[i].Seq <= entries[i-1].Seq {
			return fmt.Errorf("catalog: outbox done: entries out of seq order (%d after %d)", entries[i].Seq, entries[i-1].Seq)
		}
	}
	return c.Update(ctx, func(t *Tx) error {
		for i := 0; i < len(entries); {
			e := entries[i]
			if !e.MetaDone || !e.IndexDone {
				if _, err := t.tx.ExecContext(ctx, `UPDATE outbox SET meta_done = ?, index_done = ? WHERE key = ? AND seq = ?`,
					e.MetaDone, e.IndexDone, e.Key, e.Seq); err != nil {
					return err
				}
				i++
				continue
			}
			j := i + 1
			for j < len(entries) && entries[j].MetaDone && entries[j].IndexDone {
				j++
			}
			if _, err := t.tx.ExecContext(ctx, outboxDoneRange, e.Seq, entries[j-1].Seq); err != nil {
				return err
			}
			i = j
		}
		return nil
	})
}

// DirtyAllDocs re-dirties every live and retired document (a rebuild of derived stores, e.g.
// after the index was lost). O(collection): only for explicit rebuilds.
func (c *Catalog) DirtyAllDocs(ctx context.Context) error {
	var ids []string
	if err := c.DocumentIDs(ctx, func(id string, _ bool) error { ids = append(ids, DocKey(id)); return nil }); err != nil {
		return err
	}
	return c.DirtyKeys(ctx, ids)
}

// DirtyKeys marks outbox keys dirty in transactions of 5,000, for rebuilds that may cover the
// whole collection.
func (c *Catalog) DirtyKeys(ctx context.Context, keys []string) error {
	for len(keys) > 0 {
		n := min(len(keys), 5000)
		if err := c.Update(ctx, func(t *Tx) error { return t.Dirty(ctx, keys[:n]...) }); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// IndexSettled counts, in one statement, the live documents whose index entry is settled (no
// index write of theirs waits in the outbox) and the documents, live or not, with an index
// write pending. An index in line with the catalog holds every settled live document, plus at
// most the pending ones (their write may already have happened once before).
func (c *Catalog) IndexSettled(ctx context.Context) (settledLive, pending int64, err error) {
	err = c.r.QueryRowContext(ctx, `SELECT
		coalesce(sum(d.retired = 0 AND o.key IS NULL), 0),
		(SELECT count(*) FROM outbox WHERE key >= 'doc:' AND key < 'doc;' AND index_done = 0)
		FROM documents d LEFT JOIN outbox o ON o.key = 'doc:' || d.id AND o.index_done = 0`).Scan(&settledLive, &pending)
	if err != nil {
		return 0, 0, fmt.Errorf("catalog: settled index count: %w", err)
	}
	return settledLive, pending, nil
}

// IndexPendingDocs calls fn with the id of every document that has an index write pending.
func (c *Catalog) IndexPendingDocs(ctx context.Context, fn func(id string) error) error {
	rows, err := c.r.QueryContext(ctx, `SELECT key FROM outbox WHERE key >= 'doc:' AND key < 'doc;' AND index_done = 0`)
	if err != nil {
		return fmt.Errorf("catalog: pending index writes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return err
		}
		if err := fn(strings.TrimPrefix(k, KeyDoc)); err != nil {
			return err
		}
	}
	return rows.Err()
}
