package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// JobState is a job row's state.
type JobState string

const (
	JobQueued JobState = "queued" // its item is in Redis (waiting, running, or retrying)
	JobParked JobState = "parked" // failed MAX_ATTEMPTS times; the document moved on
)

// Job is one (document, module) job.
type Job struct {
	DocID   string
	Module  string
	Token   string
	Attempt int
	State   JobState
	Reason  string
	Since   time.Time
	Updated time.Time
}

// PutJob inserts or replaces a job row.
func (t *Tx) PutJob(ctx context.Context, j Job) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO jobs(doc_id, module, token, attempt, state, reason, since, updated)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(doc_id, module) DO UPDATE SET token = excluded.token, attempt = excluded.attempt,
			state = excluded.state, reason = excluded.reason, since = excluded.since, updated = excluded.updated`,
		j.DocID, j.Module, j.Token, j.Attempt, string(j.State), j.Reason, j.Since.UnixMilli(), j.Updated.UnixMilli())
	if err != nil {
		return fmt.Errorf("catalog: job %s/%s: %w", j.DocID, j.Module, err)
	}
	return nil
}

// DeleteJob removes a job row. Missing is fine.
func (t *Tx) DeleteJob(ctx context.Context, docID, module string) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM jobs WHERE doc_id = ? AND module = ?`, docID, module)
	return err
}

// Job reads one job row inside a transaction.
func (t *Tx) Job(ctx context.Context, docID, module string) (Job, bool, error) {
	return scanJob(t.tx.QueryRowContext(ctx, jobSelect+` WHERE doc_id = ? AND module = ?`, docID, module))
}

// Job reads one job row.
func (c *Catalog) Job(ctx context.Context, docID, module string) (Job, bool, error) {
	return scanJob(c.r.QueryRowContext(ctx, jobSelect+` WHERE doc_id = ? AND module = ?`, docID, module))
}

const jobSelect = `SELECT doc_id, module, token, attempt, state, reason, since, updated FROM jobs`

func scanJob(row *sql.Row) (Job, bool, error) {
	var j Job
	var state string
	var since, updated int64
	err := row.Scan(&j.DocID, &j.Module, &j.Token, &j.Attempt, &state, &j.Reason, &since, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return j, false, nil
	}
	if err != nil {
		return j, false, fmt.Errorf("catalog: job: %w", err)
	}
	j.State, j.Since, j.Updated = JobState(state), time.UnixMilli(since), time.UnixMilli(updated)
	return j, true, nil
}

// scanJobs reads the rows of a jobSelect query and closes them.
func scanJobs(rows *sql.Rows) ([]Job, error) {
	defer rows.Close()
	var out []Job
	for rows.Next() {
		var j Job
		var st string
		var since, updated int64
		if err := rows.Scan(&j.DocID, &j.Module, &j.Token, &j.Attempt, &st, &j.Reason, &since, &updated); err != nil {
			return nil, err
		}
		j.State, j.Since, j.Updated = JobState(st), time.UnixMilli(since), time.UnixMilli(updated)
		out = append(out, j)
	}
	return out, rows.Err()
}

// Jobs returns a module's jobs in a state, at most limit (0 = all).
func (c *Catalog) Jobs(ctx context.Context, module string, state JobState, limit int) ([]Job, error) {
	q := jobSelect + ` WHERE module = ? AND state = ? ORDER BY updated`
	args := []any{module, string(state)}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := c.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("catalog: jobs %s: %w", module, err)
	}
	return scanJobs(rows)
}

// StrandedJobs returns a module's queued jobs that should not be waiting in Redis: their
// document has no available path any more (its drive was unplugged), or it is gone. The dispatcher withdraws the ones that
// have not started. O(queued jobs of the module).
func (c *Catalog) StrandedJobs(ctx context.Context, module string) ([]string, error) {
	return c.ids(ctx, `SELECT j.doc_id FROM jobs j LEFT JOIN documents d ON d.id = j.doc_id
		WHERE j.module = ? AND j.state = 'queued'
		AND (d.id IS NULL OR d.retired = 1 OR d.dispatch_tier IS NULL)`, module)
}

// QueuedTierB returns the module's queued jobs whose document is in tier B: when a drive
// appears, the ones not started yet are withdrawn so the drive's jobs go first.
func (c *Catalog) QueuedTierB(ctx context.Context, module string) ([]string, error) {
	return c.ids(ctx, `SELECT j.doc_id FROM jobs j JOIN documents d ON d.id = j.doc_id
		WHERE j.module = ? AND j.state = 'queued' AND d.dispatch_tier = 1`, module)
}

// ids runs a query returning one string column.
func (c *Catalog) ids(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := c.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// DeleteQueuedJobs forgets every queued job (Redis lost its data: they are dispatched again).
// Parked jobs stay parked. Returns how many were forgotten.
func (c *Catalog) DeleteQueuedJobs(ctx context.Context) (int64, error) {
	var n int64
	err := c.Update(ctx, func(t *Tx) error {
		res, err := t.tx.ExecContext(ctx, `DELETE FROM jobs WHERE state = 'queued'`)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}
