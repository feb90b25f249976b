package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// MergeOutcome says what Merge did.
type MergeOutcome int

const (
	MergeApplied  MergeOutcome = iota // fields merged, `next` advanced if it was this module
	MergeReplayed                     // this job's result was merged before: nothing changed
	MergeStale                        // no such job in flight (file changed, requeued, unknown)
)

func (o MergeOutcome) String() string {
	return [...]string{"applied", "replayed", "stale"}[o]
}

// MergeInput is one module result, validated by the merger.
type MergeInput struct {
	DocID, Module, Token string
	// Fields are the module-owned top-level fields to set (core fields already removed).
	Fields map[string]json.RawMessage
	// Content: the module's content.json was written, so its chunks must be rebuilt.
	Content bool
	// Pipeline is the module names in order, to advance `next`.
	Pipeline []string
	At       time.Time
}

// Merge applies one module result in one transaction; see MergeBatch.
func (c *Catalog) Merge(ctx context.Context, in MergeInput) (MergeOutcome, error) {
	out, err := c.MergeBatch(ctx, []MergeInput{in})
	if err != nil {
		return MergeStale, err
	}
	return out[0], nil
}

// MergeBatch applies module results in one transaction (one commit for many results is what
// lets the merger keep up with fast modules). For each result it checks the job is the one in
// flight, merges the fields, advances `next` when it names this module, clears the module's
// failure, records the merge (so a replay is a no-op) and dirties the document, its drives'
// markers and, with content, its chunks. Results are applied in order, so a duplicate later in
// the batch is a replay of the earlier one.
func (c *Catalog) MergeBatch(ctx context.Context, ins []MergeInput) ([]MergeOutcome, error) {
	outs := make([]MergeOutcome, len(ins))
	err := c.Update(ctx, func(t *Tx) error {
		for i, in := range ins {
			out, err := t.merge(ctx, in)
			if err != nil {
				return fmt.Errorf("catalog: merge %s/%s: %w", in.DocID, in.Module, err)
			}
			outs[i] = out
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return outs, nil
}

// mergeLookup reads, in one statement, what merge decides on: the token of the job in flight,
// the document (NULLs when there is none), and whether any of its paths is on an archive drive
// (whose marker the merge then dirties).
const mergeLookup = `SELECT
	(SELECT token FROM jobs WHERE doc_id = ?1 AND module = ?2),
	d.retired, d.fields, d.failures,
	EXISTS(SELECT 1 FROM files WHERE doc_id = ?1 AND drive IS NOT NULL)
FROM (SELECT 1) LEFT JOIN documents d ON d.id = ?1`

// merge applies one result; every statement here runs once per merged file, so there are few.
func (t *Tx) merge(ctx context.Context, in MergeInput) (MergeOutcome, error) {
	var onDrive bool
	var token, docFields, docFailures sql.NullString
	var retired sql.NullBool
	if err := t.tx.QueryRowContext(ctx, mergeLookup, in.DocID, in.Module).
		Scan(&token, &retired, &docFields, &docFailures, &onDrive); err != nil {
		return MergeStale, err
	}
	switch {
	case !token.Valid || token.String != in.Token:
		// Not the job in flight, which a merge deletes: a replay of the last merge, or stale.
		// Either way nothing changes; merges tells the two apart for the counters.
		var last string
		err := t.tx.QueryRowContext(ctx, `SELECT token FROM merges WHERE doc_id = ? AND module = ?`, in.DocID, in.Module).Scan(&last)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return MergeStale, err
		}
		if last == in.Token {
			return MergeReplayed, nil
		}
		return MergeStale, nil
	case !retired.Valid || retired.Bool:
		return MergeStale, t.DeleteJob(ctx, in.DocID, in.Module)
	}
	fields, failures := docFields.String, docFailures.String
	var err error
	if fields, err = mergedFields(fields, in.Fields); err != nil {
		return MergeStale, err
	}
	failures, _ = withFailure(failures, in.Module, nil)
	if _, err := t.tx.ExecContext(ctx, `UPDATE documents SET fields = ?, failures = ?,
		next = CASE WHEN next = ? THEN ? ELSE next END WHERE id = ?`,
		fields, failures, in.Module, nextModule(in.Pipeline, in.Module), in.DocID); err != nil {
		return MergeStale, err
	}
	if err := t.DeleteJob(ctx, in.DocID, in.Module); err != nil {
		return MergeStale, err
	}
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO merges(doc_id, module, token, at, n) VALUES(?, ?, ?, ?, 1)
		ON CONFLICT(doc_id, module) DO UPDATE SET token = excluded.token, at = excluded.at, n = n + 1`,
		in.DocID, in.Module, in.Token, in.At.UnixMilli()); err != nil {
		return MergeStale, err
	}
	if in.Content {
		if err := t.Dirty(ctx, ChunksKey(in.DocID, in.Module)); err != nil {
			return MergeStale, err
		}
	}
	// A merge changes no path, so the dispatch order stays: no refresh.
	if !onDrive {
		return MergeApplied, t.dirty(ctx, false, DocKey(in.DocID))
	}
	return MergeApplied, t.dirtyDocDrives(ctx, in.DocID, false)
}

// Park records a job that failed MAX_ATTEMPTS times: the job row stays (parked, with its
// reason), the document's `failures` names the module, and the document moves on down the
// chain so one poison file never blocks its drive. A token that is not the job's is ignored.
func (c *Catalog) Park(ctx context.Context, docID, module, token string, attempts int, reason string, pipeline []string, at time.Time) (bool, error) {
	parked := false
	err := c.Update(ctx, func(t *Tx) error {
		j, ok, err := t.Job(ctx, docID, module)
		if err != nil || !ok || (token != "" && j.Token != token) {
			return err
		}
		j.State, j.Attempt, j.Reason, j.Updated = JobParked, attempts, reason, at
		if err := t.PutJob(ctx, j); err != nil {
			return err
		}
		f, _ := json.Marshal(map[string]any{"reason": reason, "attempts": attempts, "at": at.UTC().Format(time.RFC3339)})
		if err := t.setFailure(ctx, docID, module, f); err != nil {
			return err
		}
		if err := t.moveOn(ctx, docID, module, pipeline); err != nil {
			return err
		}
		parked = true
		return t.dirtyDocDrives(ctx, docID, false)
	})
	return parked, err
}

// mergedFields returns the stored fields object with fields set (shallow: a field's value is
// replaced whole, like Meilisearch's partial update).
func mergedFields(cur string, fields map[string]json.RawMessage) (string, error) {
	if len(fields) == 0 {
		return cur, nil
	}
	out, err := protocol.SetMembers(cur, fields)
	if err != nil {
		return "", fmt.Errorf("stored fields: %w", err)
	}
	return out, nil
}

// nextModule is the module after module in pipeline, or "" at the end.
func nextModule(pipeline []string, module string) string {
	for i, m := range pipeline {
		if m == module && i+1 < len(pipeline) {
			return pipeline[i+1]
		}
	}
	return ""
}

// moveOn advances `next` past module when it names it.
func (t *Tx) moveOn(ctx context.Context, id, module string, pipeline []string) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE documents SET next = ? WHERE id = ? AND next = ?`, nextModule(pipeline, module), id, module)
	return err
}

// setFailure sets (value non-nil) or clears a module's entry in `failures`.
func (t *Tx) setFailure(ctx context.Context, id, module string, value json.RawMessage) error {
	var cur string
	if err := t.tx.QueryRowContext(ctx, `SELECT failures FROM documents WHERE id = ?`, id).Scan(&cur); err != nil {
		return err
	}
	next, changed := withFailure(cur, module, value)
	if !changed {
		return nil
	}
	_, err := t.tx.ExecContext(ctx, `UPDATE documents SET failures = ? WHERE id = ?`, next, id)
	return err
}

// withFailure returns the failures object cur with module's entry set (value non-nil) or
// cleared, and whether that changed anything.
func withFailure(cur, module string, value json.RawMessage) (string, bool) {
	m := map[string]json.RawMessage{}
	if cur != "" && cur != "{}" {
		_ = json.Unmarshal([]byte(cur), &m)
	}
	if _, had := m[module]; !had && value == nil {
		return cur, false
	}
	if value == nil {
		delete(m, module)
	} else {
		m[module] = value
	}
	b, _ := json.Marshal(m)
	return string(b), true
}

// dirtyDocAndDrives dirties a document and the markers of every drive it has a path on, so a
// drive flips to ready the moment its last pending file is merged.
func (t *Tx) dirtyDocAndDrives(ctx context.Context, id string) error {
	return t.dirtyDocDrives(ctx, id, true)
}

// dirtyDocDrives is dirtyDocAndDrives; refresh=false skips recomputing the document's dispatch
// order, for changes that touch none of its paths (a merge, a park).
func (t *Tx) dirtyDocDrives(ctx context.Context, id string, refresh bool) error {
	rows, err := t.tx.QueryContext(ctx, `SELECT DISTINCT drive FROM files WHERE doc_id = ? AND drive IS NOT NULL`, id)
	if err != nil {
		return err
	}
	keys := []string{DocKey(id)}
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return err
		}
		keys = append(keys, DriveKey(d))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return t.dirty(ctx, refresh, keys...)
}

// MergeCount returns how many results were merged for a (document, module): more than one
// for the same content and module version means a double merge.
func (c *Catalog) MergeCount(ctx context.Context, docID, module string) (int, error) {
	var n int
	err := c.r.QueryRowContext(ctx, `SELECT n FROM merges WHERE doc_id = ? AND module = ?`, docID, module).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}
