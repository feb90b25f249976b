package filesync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/drives"
	"github.com/homeindex/homeindex/internal/scanner"
)

// found is one walked path with its catalog row (had: there is one).
type found struct {
	e   scanner.Entry
	old catalog.File
	had bool
}

// change is one hashed path ready to be recorded.
type change struct {
	found
	id   string
	typ  string
	keep bool // stat only: the content is unchanged (legacy row confirmed, or touched file)
}

// fileCursor reads the catalog's file rows in path order, one snapshot for the whole walk. A
// goroutine of its own reads them in batches, so on two cores the catalog's rows are decoded
// while the walker waits on the kernel's lstat: an unchanged re-sync costs about the longer
// of the two, not their sum.
type fileCursor struct {
	batches  chan []catalog.File
	stopping chan struct{} // closed by stop: the reader gives up at its next batch
	finished chan struct{} // closed when the reader has returned (its rows are closed)
	buf      []catalog.File
	head     catalog.File
	ok       bool  // head is a row
	err      error // the reader's error; read only after batches is closed
}

const cursorBatch = 256

var errCursorStopped = errors.New("cursor stopped")

func openCursor(ctx context.Context, cat *catalog.Catalog) *fileCursor {
	c := &fileCursor{
		batches:  make(chan []catalog.File, 4),
		stopping: make(chan struct{}),
		finished: make(chan struct{}),
	}
	go func() {
		defer close(c.finished)
		defer close(c.batches)
		batch := make([]catalog.File, 0, cursorBatch)
		send := func() error {
			select {
			case c.batches <- batch:
				batch = make([]catalog.File, 0, cursorBatch)
				return nil
			case <-c.stopping:
				return errCursorStopped
			}
		}
		err := cat.Files(ctx, func(f catalog.File) error {
			if batch = append(batch, f); len(batch) == cursorBatch {
				return send()
			}
			return nil
		})
		if err == nil && len(batch) > 0 {
			err = send()
		}
		if err != nil && !errors.Is(err, errCursorStopped) {
			c.err = err // published by close(c.batches)
		}
	}()
	// The first batch fixes the snapshot before the walk records anything.
	c.advance()
	return c
}

// advance moves head to the next row.
func (c *fileCursor) advance() {
	if len(c.buf) == 0 {
		c.buf = <-c.batches // nil once the reader is done
	}
	if len(c.buf) == 0 {
		c.head, c.ok = catalog.File{}, false
		return
	}
	c.head, c.ok = c.buf[0], true
	c.buf = c.buf[1:]
}

// stop ends the reader and waits for it, so the read snapshot is released on return.
func (c *fileCursor) stop() {
	close(c.stopping)
	<-c.finished
}

// passTo moves the cursor up to rel: rows before it were not walked (they go to passed); the
// row at rel, if any, is returned and consumed.
func (c *fileCursor) passTo(rel string, passed func(catalog.File)) (catalog.File, bool) {
	for c.ok && c.head.Path < rel {
		passed(c.head)
		c.advance()
	}
	if c.ok && c.head.Path == rel {
		f := c.head
		c.advance()
		return f, true
	}
	return catalog.File{}, false
}

// rest hands every row not consumed yet to passed.
func (c *fileCursor) rest(passed func(catalog.File)) {
	for c.ok {
		passed(c.head)
		c.advance()
	}
}

// walk streams the tree: unchanged files are only marked seen, others are hashed in parallel
// and recorded in batches.
func (r *syncRun) walk(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan scanner.HashJob, 256)
	results := make(chan scanner.HashResult, 256)
	h := scanner.Hasher{Workers: r.s.cfg.HashWorkers}
	go h.Run(ctx, jobs, results)
	r.cursor = openCursor(ctx, r.s.cat)
	defer r.cursor.stop()
	passed := func(f catalog.File) { r.unseen = append(r.unseen, f) }

	var confirmed []change // legacy rows whose size and mtime still match: no read needed
	walkErr := make(chan error, 1)
	go func() {
		defer close(jobs)
		defer r.s.progress.walkDone.Store(true)
		walkErr <- scanner.Walk(ctx, r.s.cfg.Root, scanner.WalkOptions{
			Skip: r.skip,
			OnError: func(rel string, err error) {
				r.cursor.passTo(rel, passed) // a path that exists but cannot be read keeps its row
				if pe := (*fs.PathError)(nil); errors.As(err, &pe) && isDirError(pe.Op) {
					r.noteUnreadableDir(rel, pe.Err)
				}
				r.noteError(rel, err)
			},
			OnDir: r.noteDir,
		}, func(e scanner.Entry) error {
			r.st.Walked++
			r.s.progress.walked.Add(1)
			old, ok := r.cursor.passTo(e.Rel, passed)
			if ok && !old.Legacy() && old.Dev == e.Dev && old.Ino == e.Ino && old.Size == e.Size && old.MtimeNs == e.MtimeNs {
				r.st.Unchanged++
				return nil
			}
			w := found{e: e, old: old, had: ok}
			if ok && old.Legacy() && old.Size == e.Size && legacyMtimeMatches(old.Mtime, e.MtimeNs) {
				confirmed = append(confirmed, change{found: w, id: old.DocID, keep: true})
				return nil
			}
			if r.unsettled(e) {
				r.noteUnsettled(e.Rel, "modified less than SETTLE_TIME ago")
				return nil
			}
			r.s.progress.toHash.Add(1)
			r.s.progress.toHashB.Add(e.Size)
			select {
			// Detect: the hasher's workers name the type from the bytes they hashed, so the
			// single recording goroutine below neither opens nor reads a new file again.
			case jobs <- scanner.HashJob{Path: r.abs(e.Rel), Ref: w, Detect: true}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()

	batch := make([]change, 0, r.s.cfg.BatchSize)
	var applyErr error
	for res := range results {
		if applyErr != nil {
			continue // drain
		}
		w := res.Job.Ref.(found)
		e := w.e
		if res.Err != nil {
			r.noteError(e.Rel, res.Err)
			continue
		}
		if res.Stat.Size != e.Size || res.Stat.MtimeNs != e.MtimeNs {
			r.noteUnsettled(e.Rel, "changed while it was read")
			continue
		}
		r.st.Hashed++
		r.st.HashedBytes += e.Size
		r.s.progress.hashed.Add(1)
		r.s.progress.hashedB.Add(e.Size)
		c := change{found: w, id: res.ID}
		if !w.had || w.old.DocID != res.ID {
			c.typ = res.Type
		} else {
			c.keep = true
		}
		batch = append(batch, c)
		if len(batch) >= r.s.cfg.BatchSize {
			applyErr = r.record(ctx, batch)
			batch = batch[:0]
			if applyErr != nil {
				cancel()
			}
		}
	}
	if applyErr == nil && len(batch) > 0 {
		applyErr = r.record(ctx, batch)
	}
	if err := <-walkErr; err != nil && applyErr == nil {
		var pe *fs.PathError
		if !errors.As(err, &pe) || pe.Path != r.s.cfg.Root || ctx.Err() != nil {
			return err
		}
		// The files root itself cannot be opened: every path below it is held.
		r.noteUnreadableDir("", pe.Err)
		r.s.log.Warn().Str("root", r.s.cfg.Root).Err(pe.Err).Msg("files root unreadable")
	}
	if applyErr == nil {
		r.cursor.rest(passed) // the walk has ended: the rows after its last path were not seen
		if r.cursor.err != nil {
			return fmt.Errorf("sync: read catalog: %w", r.cursor.err)
		}
	}
	for applyErr == nil && len(confirmed) > 0 {
		n := min(len(confirmed), r.s.cfg.BatchSize)
		applyErr = r.record(ctx, confirmed[:n])
		confirmed = confirmed[n:]
	}
	return applyErr
}

// abs is the path of the walked file rel: the root and rel, which the walk built from names
// it read (never "", "." or ".."), joined without filepath.Join's Clean (a first sync joined
// every new file's path). A root that is "/" or not clean is joined by filepath.Join.
func (r *syncRun) abs(rel string) string {
	if !r.rootJoins {
		return filepath.Join(r.s.cfg.Root, filepath.FromSlash(rel))
	}
	return r.s.cfg.Root + string(filepath.Separator) + filepath.FromSlash(rel)
}

// skip keeps the metadata and state directories and status markers out of the walk.
func (r *syncRun) skip(rel string, isDir bool) bool {
	for _, s := range r.s.cfg.SkipRel {
		if s != "" && (rel == s || strings.HasPrefix(rel, s+"/")) {
			return true
		}
	}
	return !isDir && drives.IsMarker(path.Base(rel))
}

// noteError logs a per-path problem. A path that exists but cannot be read keeps its catalog
// row: a transient error must not delete data.
func (r *syncRun) noteError(rel string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.Errors++
	r.s.log.Warn().Str("path", rel).Err(err).Msg("skipped file")
}

// record writes one batch of hashed paths in one transaction.
func (r *syncRun) record(ctx context.Context, batch []change) error {
	err := r.s.cat.Update(ctx, func(t *catalog.Tx) error {
		for rest := batch; len(rest) > 0; {
			// Paths new to the catalog (most of a first sync) are written a run at a time.
			n := 1
			var err error
			if rest[0].isNew() {
				for n < len(rest) && rest[n].isNew() {
					n++
				}
				err = r.recordNew(ctx, t, rest[:n])
			} else {
				err = r.recordOne(ctx, t, rest[0])
			}
			if err != nil {
				return err
			}
			rest = rest[n:]
		}
		return nil
	})
	if err == nil && r.s.cfg.Recorded != nil {
		r.s.cfg.Recorded()
	}
	return err
}

// recordOne writes a change of a path the catalog had: a touched file (keep) or new content.
func (r *syncRun) recordOne(ctx context.Context, t *catalog.Tx, c change) error {
	if c.keep {
		// Same content: refresh the cache key; the document changes only if the mtime did.
		if err := t.PutFile(ctx, r.fileRow(c)); err != nil {
			return err
		}
		if c.old.Mtime != scanner.TruncateMtime(c.e.MtimeNs) {
			return t.Dirty(ctx, catalog.DocKey(c.id))
		}
		return nil
	}
	if err := r.recordNew(ctx, t, []change{c}); err != nil {
		return err
	}
	if !c.had {
		return nil
	}
	r.st.Modified++
	// The path's old content lost this path. With no path left it is retired: its by-id
	// directory (module output) stays on disk, it leaves the index.
	n, err := t.DocPathCount(ctx, c.old.DocID)
	if err != nil {
		return err
	}
	if n == 0 {
		if err := t.SetMissing(ctx, c.old.DocID, r.s.cfg.Now()); err != nil {
			return err
		}
		r.st.RetiredDocs++
	}
	return t.Dirty(ctx, catalog.DocKey(c.old.DocID))
}

// isNew reports whether c is a path the catalog did not have (record writes runs of them with
// recordNew).
func (c change) isNew() bool { return !c.keep && !c.had }

// recordNew writes the content of changes that are not keep: their documents (created or
// brought back), their path rows and their dirty keys, in fewer statements than one change
// at a time and to the same end. It counts a change as added when its path is new; recordOne
// counts, and settles the old content of, a path that had other content.
func (r *syncRun) recordNew(ctx context.Context, t *catalog.Tx, run []change) error {
	// Most files of a first sync are new content: try the insert first, and look the document
	// up only when it exists already.
	rows := make([]catalog.DocRow, len(run))
	files := make([]catalog.File, len(run))
	next := r.s.cfg.FirstModule()
	for i, c := range run {
		files[i] = r.fileRow(c)
		rows[i] = catalog.DocRow{ID: c.id, Type: c.typ, Size: c.e.Size, Next: next, Version: versionCurrent}
		if files[i].Drive == "" {
			rows[i].LocalPath = c.e.Rel
		}
	}
	created, err := t.InsertDocuments(ctx, rows)
	if err != nil {
		return err
	}
	for i, c := range run {
		if created[i] {
			r.st.NewDocs++
			continue
		}
		state, err := t.DocumentState(ctx, c.id)
		if err != nil {
			return err
		}
		if state == catalog.DocRetired {
			// Missing content came back (moved, restored, remounted): it is live again with
			// its module outputs and chain state; nothing runs again.
			if err := t.SetRetired(ctx, c.id, false); err != nil {
				return err
			}
			r.st.ReturnedDocs++
		}
	}
	if err := t.PutFiles(ctx, files); err != nil {
		return err
	}
	for i, c := range run {
		if d := files[i].Drive; d != "" {
			r.changedDrives[d] = true
		}
		var err error
		if rows[i].LocalPath != "" && created[i] {
			err = t.DirtyNew(ctx, rows[i], files[i])
		} else {
			err = t.Dirty(ctx, catalog.DocKey(c.id), catalog.PathKey(c.e.Rel))
		}
		if err != nil {
			return err
		}
		if !c.had {
			r.st.Added++
		}
	}
	return nil
}

// fileRow is the path row c records.
func (r *syncRun) fileRow(c change) catalog.File {
	e := c.e
	return catalog.File{Path: e.Rel, DocID: c.id, Dev: e.Dev, Ino: e.Ino, Size: e.Size, MtimeNs: e.MtimeNs,
		Mtime: scanner.TruncateMtime(e.MtimeNs), Drive: r.driveOf(e.Rel)}
}

// legacyMtimeMatches compares a legacy document's stored mtime with a stat: upstream wrote
// Python's truncated float (pre-refactor) or the raw st_mtime (HEAD), both a little off an exact
// truncation for some values, so any of the three forms counts as unchanged.
func legacyMtimeMatches(stored float64, ns int64) bool {
	return stored == scanner.TruncateMtime(ns) || stored == scanner.UpstreamTruncateMtime(ns) || stored == scanner.UpstreamMtime(ns)
}
