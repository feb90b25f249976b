package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Meta keys of the operator surface (status, failed, pause).
const (
	MetaPaused   = "paused_modules" // JSON list of paused module names
	MetaLastSync = "last_sync"      // JSON of the last sync's summary
	// MetaParkedDroppedPrefix + module counts parked jobs dropped by the FAILED_MAX bound.
	MetaParkedDroppedPrefix = "parked_dropped:"
)

// ModuleCount is where a module's documents stand in the catalog.
type ModuleCount struct {
	// Waiting: live documents whose next is the module, with an available path, not
	// dispatched (no job row): the backlog the dispatcher draws from.
	Waiting int64
	// WaitingOffline: live documents whose next is the module but whose every path is on an
	// absent drive: they wait for the drive.
	WaitingOffline int64
	// Dispatched: job rows in state queued (their item is in Redis).
	Dispatched int64
	// Parked: job rows in state parked.
	Parked int64
	// Done: live documents past the module in the chain (merged, or skipped by its check),
	// minus those with a job of the module: parked, or parked and retried (running again).
	Done int64
}

// ModuleCounts returns, for each module of pipeline (in order), where its documents stand.
// live is the number of live documents (CountDocuments, which the caller may cache: it is the
// only O(collection) part). Cost: O(documents with a module due + job rows).
func (c *Catalog) ModuleCounts(ctx context.Context, pipeline []string, live int64) (map[string]ModuleCount, error) {
	out := make(map[string]ModuleCount, len(pipeline))
	pos := make(map[string]int, len(pipeline))
	for i, m := range pipeline {
		pos[m] = i
	}
	// Pending documents by next and by whether they have an available path (the partial
	// index on next covers exactly these).
	rows, err := c.r.QueryContext(ctx, `SELECT next, dispatch_tier IS NULL, count(*) FROM documents
		WHERE next != '' AND retired = 0 GROUP BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("catalog: module counts: %w", err)
	}
	avail, offline := map[string]int64{}, map[string]int64{}
	var unknown int64 // due at a module no longer configured
	for rows.Next() {
		var next string
		var off bool
		var n int64
		if err := rows.Scan(&next, &off, &n); err != nil {
			rows.Close()
			return nil, err
		}
		if _, ok := pos[next]; !ok {
			unknown += n
		} else if off {
			offline[next] += n
		} else {
			avail[next] += n
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	jobs, err := c.jobCounts(ctx)
	if err != nil {
		return nil, err
	}
	var dueUpTo int64 // documents due at this module or an earlier one
	for i, m := range pipeline {
		mc := ModuleCount{Dispatched: jobs[m][JobQueued], Parked: jobs[m][JobParked], WaitingOffline: offline[m]}
		dueUpTo += avail[m] + offline[m]
		// Job rows of m by the document's next: queued rows of documents due at m are the
		// window the dispatcher sent (not waiting any more); every row of a document that
		// moved past m (parked, or parked then retried and running again) is not done in m.
		rows, err := c.r.QueryContext(ctx, `SELECT d.next, j.state = 'queued' AND d.dispatch_tier IS NOT NULL, count(*)
			FROM jobs j JOIN documents d ON d.id = j.doc_id WHERE j.module = ? AND d.retired = 0 GROUP BY 1, 2`, m)
		if err != nil {
			return nil, fmt.Errorf("catalog: module counts %s: %w", m, err)
		}
		var dispatched, past int64
		for rows.Next() {
			var next string
			var queuedAvail bool
			var n int64
			if err := rows.Scan(&next, &queuedAvail, &n); err != nil {
				rows.Close()
				return nil, err
			}
			p, known := pos[next]
			switch {
			case next == m && queuedAvail:
				dispatched += n
			case next == "" || known && p > i:
				past += n
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		mc.Waiting = max(avail[m]-dispatched, 0)
		mc.Done = max(live-dueUpTo-unknown-past, 0)
		out[m] = mc
	}
	return out, nil
}

// jobCounts counts job rows by module and state (the jobs_module_state index).
func (c *Catalog) jobCounts(ctx context.Context) (map[string]map[JobState]int64, error) {
	rows, err := c.r.QueryContext(ctx, `SELECT module, state, count(*) FROM jobs GROUP BY module, state`)
	if err != nil {
		return nil, fmt.Errorf("catalog: job counts: %w", err)
	}
	defer rows.Close()
	out := map[string]map[JobState]int64{}
	for rows.Next() {
		var m, st string
		var n int64
		if err := rows.Scan(&m, &st, &n); err != nil {
			return nil, err
		}
		if out[m] == nil {
			out[m] = map[JobState]int64{}
		}
		out[m][JobState(st)] = n
	}
	return out, rows.Err()
}

// ParkedJob is a parked job with the path its document is best known by.
type ParkedJob struct {
	Job
	Path string // the document's first path in byte order; "" when it has none left
}

// ParkedJobs returns parked jobs, newest first: of one module, or of every module when module
// is "". limit <= 0 means all. Cost: O(parked), which FAILED_MAX bounds.
func (c *Catalog) ParkedJobs(ctx context.Context, module string, limit int) ([]ParkedJob, error) {
	q := `SELECT j.doc_id, j.module, j.token, j.attempt, j.state, j.reason, j.since, j.updated,
		coalesce((SELECT min(f.path) FROM files f WHERE f.doc_id = j.doc_id), '')
		FROM jobs j WHERE j.state = 'parked'`
	var args []any
	if module != "" {
		q += ` AND j.module = ?`
		args = append(args, module)
	}
	q += ` ORDER BY j.updated DESC, j.doc_id`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := c.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("catalog: parked jobs: %w", err)
	}
	defer rows.Close()
	var out []ParkedJob
	for rows.Next() {
		var p ParkedJob
		var st string
		var since, updated int64
		if err := rows.Scan(&p.DocID, &p.Module, &p.Token, &p.Attempt, &st, &p.Reason, &since, &updated, &p.Path); err != nil {
			return nil, err
		}
		p.State, p.Since, p.Updated = JobState(st), time.UnixMilli(since), time.UnixMilli(updated)
		out = append(out, p)
	}
	return out, rows.Err()
}

// OldestParked returns a module's n oldest parked jobs (the FAILED_MAX bound drops these).
func (c *Catalog) OldestParked(ctx context.Context, module string, n int) ([]Job, error) {
	rows, err := c.r.QueryContext(ctx, jobSelect+` WHERE module = ? AND state = 'parked' ORDER BY updated, doc_id LIMIT ?`, module, n)
	if err != nil {
		return nil, fmt.Errorf("catalog: oldest parked %s: %w", module, err)
	}
	return scanJobs(rows)
}

// DropParked deletes parked job rows of a module (only those still parked under the token
// given), and, when dropped is true, adds how many went to the module's dropped counter (the
// FAILED_MAX bound). Documents keep their failures entry. Returns how many rows went.
func (c *Catalog) DropParked(ctx context.Context, module string, jobs map[string]string, dropped bool) (int64, error) {
	var n int64
	err := c.Update(ctx, func(t *Tx) error {
		for id, tok := range jobs {
			q, args := `DELETE FROM jobs WHERE doc_id = ? AND module = ? AND state = 'parked'`, []any{id, module}
			if tok != "" {
				q += ` AND token = ?`
				args = append(args, tok)
			}
			res, err := t.tx.ExecContext(ctx, q, args...)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			n += k
		}
		if dropped && n > 0 {
			return t.addMetaInt(ctx, MetaParkedDroppedPrefix+module, n)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("catalog: drop parked %s: %w", module, err)
	}
	return n, nil
}

// MetaInt reads an integer meta value (0 when unset or unreadable).
func (c *Catalog) MetaInt(ctx context.Context, key string) (int64, error) {
	v, ok, err := c.Meta(ctx, key)
	if err != nil || !ok {
		return 0, err
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n, nil
}

func (t *Tx) addMetaInt(ctx context.Context, key string, delta int64) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?)
		ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + ? AS TEXT)`, key, strconv.FormatInt(delta, 10), delta)
	return err
}

// SetMetaJSON writes v as a JSON meta value in its own transaction.
func (c *Catalog) SetMetaJSON(ctx context.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("catalog: meta %s: %w", key, err)
	}
	return c.Update(ctx, func(t *Tx) error { return t.SetMeta(ctx, key, string(b)) })
}

// MetaJSON reads a JSON meta value into v; ok is false when it is unset.
func (c *Catalog) MetaJSON(ctx context.Context, key string, v any) (bool, error) {
	s, ok, err := c.Meta(ctx, key)
	if err != nil || !ok {
		return false, err
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return false, fmt.Errorf("catalog: meta %s: %w", key, err)
	}
	return true, nil
}

// DriveCount is where a drive's files stand. A path counts once, by its document:
// pending (a module is due), failed (nothing due, but a module parked it) or done.
type DriveCount struct {
	Name    string
	Present bool
	Files   int64
	Pending int64
	Done    int64
	Failed  int64
}

// DriveCounts returns every drive the catalog knows (by name), with its files' state. Cost:
// O(paths on drives).
func (c *Catalog) DriveCounts(ctx context.Context) ([]DriveCount, error) {
	present, err := c.Drives(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]*DriveCount{}
	for name, p := range present {
		byName[name] = &DriveCount{Name: name, Present: p}
	}
	rows, err := c.r.QueryContext(ctx, `SELECT f.drive, d.next != '', d.failures != '{}' AND d.failures != '', count(*)
		FROM files f JOIN documents d ON d.id = f.doc_id WHERE f.drive IS NOT NULL GROUP BY 1, 2, 3`)
	if err != nil {
		return nil, fmt.Errorf("catalog: drive counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var pending, failed bool
		var n int64
		if err := rows.Scan(&name, &pending, &failed, &n); err != nil {
			return nil, err
		}
		dc := byName[name]
		if dc == nil {
			dc = &DriveCount{Name: name}
			byName[name] = dc
		}
		dc.Files += n
		switch {
		case pending:
			dc.Pending += n
		case failed:
			dc.Failed += n
		default:
			dc.Done += n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]DriveCount, 0, len(byName))
	for _, dc := range byName {
		out = append(out, *dc)
	}
	slices.SortFunc(out, func(a, b DriveCount) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ErrNoSuchDocument: no live document has that id or path.
var ErrNoSuchDocument = errors.New("no such file or document")

// ResolveDocument finds a live document by id (16 hex digits) or by path relative to
// INDEX_DIRECTORY.
func (c *Catalog) ResolveDocument(ctx context.Context, idOrPath string) (string, error) {
	var id string
	err := c.r.QueryRowContext(ctx, `SELECT id FROM documents WHERE id = ? AND retired = 0`, idOrPath).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("catalog: resolve %q: %w", idOrPath, err)
	}
	id, ok, err := c.FileDoc(ctx, idOrPath)
	if err != nil {
		return "", fmt.Errorf("catalog: resolve %q: %w", idOrPath, err)
	}
	if !ok {
		return "", ErrNoSuchDocument
	}
	return id, nil
}

// RequeueUnder sends the live documents with a path under prefix (slash form, relative to
// INDEX_DIRECTORY; "" means every document) back to module: those whose progress reached it
// (next is module, a later module of pipeline, or "") get next = module, lose a parked job
// row of module (so the dispatcher takes them again), and are dirtied with their drives' markers
// (drives flip to pending). Documents that have not reached module yet are left alone: they get
// there in order. A prefix matches a path equal to it or under it as a directory. Returns how
// many documents moved. Cost: O(paths under prefix).
func (c *Catalog) RequeueUnder(ctx context.Context, module string, pipeline []string, prefix string) (int, error) {
	idx := -1
	for i, m := range pipeline {
		if m == module {
			idx = i
		}
	}
	if idx < 0 {
		return 0, fmt.Errorf("catalog: requeue: module %q is not configured", module)
	}
	reached := map[string]bool{"": true}
	for _, m := range pipeline[idx:] {
		reached[m] = true
	}
	q := `SELECT DISTINCT d.id, d.next FROM documents d JOIN files f ON f.doc_id = d.id WHERE d.retired = 0`
	var args []any
	if prefix != "" {
		q += ` AND (f.path = ? OR (f.path >= ? AND f.path < ?))`
		args = append(args, prefix, prefix+"/", prefix+"0") // '0' follows '/' in byte order
	}
	rows, err := c.r.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("catalog: requeue %s: %w", module, err)
	}
	var ids []string
	for rows.Next() {
		var id, next string
		if err := rows.Scan(&id, &next); err != nil {
			rows.Close()
			return 0, err
		}
		if reached[next] {
			ids = append(ids, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	moved := 0
	for len(ids) > 0 {
		part := ids[:min(len(ids), 2000)]
		ids = ids[len(part):]
		err := c.Update(ctx, func(t *Tx) error {
			for _, id := range part {
				var next string
				if err := t.tx.QueryRowContext(ctx, `SELECT next FROM documents WHERE id = ? AND retired = 0`, id).Scan(&next); err != nil {
					if errors.Is(err, sql.ErrNoRows) {
						continue // gone meanwhile
					}
					return err
				}
				if !reached[next] {
					continue
				}
				if _, err := t.tx.ExecContext(ctx, `DELETE FROM jobs WHERE doc_id = ? AND module = ? AND state = 'parked'`, id, module); err != nil {
					return err
				}
				if next != module {
					if _, err := t.tx.ExecContext(ctx, `UPDATE documents SET next = ? WHERE id = ?`, module, id); err != nil {
						return err
					}
				}
				if err := t.dirtyDocAndDrives(ctx, id); err != nil {
					return err
				}
				moved++
			}
			return nil
		})
		if err != nil {
			return moved, fmt.Errorf("catalog: requeue %s: %w", module, err)
		}
	}
	return moved, nil
}

// CleanRelPath turns a user's path (relative to root, or absolute under root) into the
// catalog's slash form; "" means the whole tree. It refuses paths outside root.
func CleanRelPath(root, p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" || p == "." || p == "/" && root == "/" {
		return "", nil
	}
	if strings.HasPrefix(p, "/") {
		r := strings.TrimSuffix(root, "/")
		switch {
		case p == r:
			return "", nil
		case strings.HasPrefix(p, r+"/"):
			p = p[len(r)+1:]
		default:
			return "", fmt.Errorf("path %q is not under %s", p, root)
		}
	}
	parts := strings.Split(p, "/")
	clean := parts[:0]
	for _, s := range parts {
		switch s {
		case "", ".":
			continue
		case "..":
			return "", fmt.Errorf("path %q must not contain .. elements", p)
		}
		clean = append(clean, s)
	}
	return strings.Join(clean, "/"), nil
}

// ModuleParked counts parked job rows per module.
func (c *Catalog) ModuleParked(ctx context.Context) (map[string]int64, error) {
	jobs, err := c.jobCounts(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(jobs))
	for m, byState := range jobs {
		out[m] = byState[JobParked]
	}
	return out, nil
}
