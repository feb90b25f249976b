package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// A batch of results for distinct documents is merged with one statement per kind of change
// over a JSON list (mergeSet), instead of five or six statements per result: at the rates a
// merger sees, the per-statement work of database/sql and the driver was nearly half of a
// merge's CPU. The decisions and the changes are merge's, result by result; a batch naming a
// document twice takes merge's path, where order matters.

// mergeSetLookup is mergeLookup for every result of the list ?1 (objects d, m, t), in order.
const mergeSetLookup = `SELECT
	EXISTS(SELECT 1 FROM merges WHERE doc_id = j.value->>'d' AND module = j.value->>'m' AND token = j.value->>'t'),
	(SELECT token FROM jobs WHERE doc_id = j.value->>'d' AND module = j.value->>'m'),
	d.retired, d.fields, d.failures,
	EXISTS(SELECT 1 FROM files WHERE doc_id = j.value->>'d' AND drive IS NOT NULL)
FROM json_each(?1) j LEFT JOIN documents d ON d.id = j.value->>'d'
ORDER BY j.key`

// distinctDocs reports whether no two results name the same document.
func distinctDocs(ins []MergeInput) bool {
	seen := make(map[string]bool, len(ins))
	for _, in := range ins {
		if seen[in.DocID] {
			return false
		}
		seen[in.DocID] = true
	}
	return true
}

// setRow is one element of a JSON list a set statement reads.
type setRow struct {
	Doc      string `json:"d"`
	Module   string `json:"m"`
	Token    string `json:"t,omitempty"`
	Fields   string `json:"f"`
	Failures string `json:"x"`
	Next     string `json:"n"`
	At       int64  `json:"a"`
}

// mergeSet is merge for results of distinct documents, with one statement per kind of change.
func (t *Tx) mergeSet(ctx context.Context, ins []MergeInput, outs []MergeOutcome) error {
	list := make([]setRow, len(ins))
	for i, in := range ins {
		list[i] = setRow{Doc: in.DocID, Module: in.Module, Token: in.Token}
	}
	raw, err := json.Marshal(list)
	if err != nil {
		return err
	}
	rows, err := t.tx.QueryContext(ctx, mergeSetLookup, string(raw))
	if err != nil {
		return fmt.Errorf("catalog: merge lookup: %w", err)
	}
	var updates, dropJobs, merged []setRow
	var keys []string // outbox keys, in merge's order
	var onDrive []string
	i := 0
	for ; rows.Next(); i++ {
		in := ins[i]
		var seen, drive bool
		var token, docFields, docFailures sql.NullString
		var retired sql.NullBool
		if err := rows.Scan(&seen, &token, &retired, &docFields, &docFailures, &drive); err != nil {
			rows.Close()
			return err
		}
		switch {
		case seen:
			outs[i] = MergeReplayed
			continue
		case !token.Valid || token.String != in.Token:
			outs[i] = MergeStale
			continue
		case !retired.Valid || retired.Bool:
			outs[i] = MergeStale
			dropJobs = append(dropJobs, setRow{Doc: in.DocID, Module: in.Module})
			continue
		}
		fields, err := mergedFields(docFields.String, in.Fields)
		if err != nil {
			rows.Close()
			return fmt.Errorf("catalog: merge %s/%s: %w", in.DocID, in.Module, err)
		}
		failures, _ := withFailure(docFailures.String, in.Module, nil)
		outs[i] = MergeApplied
		updates = append(updates, setRow{Doc: in.DocID, Module: in.Module, Fields: fields, Failures: failures,
			Next: nextModule(in.Pipeline, in.Module)})
		dropJobs = append(dropJobs, setRow{Doc: in.DocID, Module: in.Module})
		merged = append(merged, setRow{Doc: in.DocID, Module: in.Module, Token: in.Token, At: in.At.UnixMilli()})
		if in.Content {
			keys = append(keys, ChunksKey(in.DocID, in.Module))
		}
		keys = append(keys, DocKey(in.DocID))
		if drive {
			onDrive = append(onDrive, in.DocID)
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if i != len(ins) {
		return fmt.Errorf("catalog: merge lookup: %d rows for %d results", i, len(ins))
	}
	if len(updates) > 0 {
		if err := t.execList(ctx, `UPDATE documents SET fields = u.value->>'f', failures = u.value->>'x',
			next = CASE WHEN next = u.value->>'m' THEN u.value->>'n' ELSE next END
			FROM json_each(?) u WHERE documents.id = u.value->>'d'`, updates); err != nil {
			return err
		}
	}
	if len(dropJobs) > 0 {
		if err := t.execList(ctx, `DELETE FROM jobs WHERE rowid IN (SELECT jobs.rowid FROM json_each(?) k
			JOIN jobs ON jobs.doc_id = k.value->>'d' AND jobs.module = k.value->>'m')`, dropJobs); err != nil {
			return err
		}
	}
	if len(merged) > 0 {
		if err := t.execList(ctx, `INSERT INTO merges(doc_id, module, token, at)
			SELECT value->>'d', value->>'m', value->>'t', value->>'a' FROM json_each(?)`, merged); err != nil {
			return err
		}
	}
	drives, err := t.drivesOf(ctx, onDrive)
	if err != nil {
		return err
	}
	for _, id := range onDrive {
		for _, d := range drives[id] {
			keys = append(keys, DriveKey(d))
		}
	}
	return t.dirtyMany(ctx, keys)
}

// execList runs a statement over list, given as its one JSON parameter.
func (t *Tx) execList(ctx context.Context, query string, list []setRow) error {
	raw, err := json.Marshal(list)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, query, string(raw))
	return err
}

// drivesOf returns the drives each of the documents has a path on.
func (t *Tx) drivesOf(ctx context.Context, ids []string) (map[string][]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := t.tx.QueryContext(ctx, `SELECT DISTINCT doc_id, drive FROM files
		WHERE doc_id IN (SELECT value FROM json_each(?)) AND drive IS NOT NULL ORDER BY doc_id, drive`, string(raw))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var id, d string
		if err := rows.Scan(&id, &d); err != nil {
			return nil, err
		}
		out[id] = append(out[id], d)
	}
	return out, rows.Err()
}

// dirtyMany is dirty (without refresh) for many keys in one statement: each key gets the next
// sequence number, in order, and a key given twice ends with the later one.
func (t *Tx) dirtyMany(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if t.seq == 0 {
		if err := t.tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM outbox`).Scan(&t.seq); err != nil {
			return fmt.Errorf("catalog: outbox seq: %w", err)
		}
	}
	type entry struct {
		Key       string `json:"k"`
		IndexDone bool   `json:"i"`
	}
	list := make([]entry, len(keys))
	for i, k := range keys {
		list[i] = entry{Key: k, IndexDone: !strings.HasPrefix(k, KeyDoc) && !strings.HasPrefix(k, KeyChunks)}
	}
	raw, err := json.Marshal(list)
	if err != nil {
		return err
	}
	// WHERE true: an upsert's SELECT needs a WHERE clause to parse.
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO outbox(key, seq, meta_done, index_done)
		SELECT value->>'k', ?2 + key + 1, 0, value->>'i' FROM json_each(?1) WHERE true
		ON CONFLICT(key) DO UPDATE SET seq = excluded.seq, meta_done = 0, index_done = excluded.index_done`,
		string(raw), t.seq); err != nil {
		return fmt.Errorf("catalog: dirty %d keys: %w", len(keys), err)
	}
	t.seq += int64(len(keys))
	return nil
}
