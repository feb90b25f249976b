package filesync

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/protocol"
)

const versionCurrent = protocol.CurrentVersion

// Reasons a directory is held.
const (
	HeldEmpty      = "empty"      // it (or the files root) has no entries left: an unmounted share looks so
	HeldUnreadable = "unreadable" // it could not be opened or listed (permissions, I/O error)
)

// heldShown bounds how many held directories a report names (the count is always exact).
const heldShown = 100

// HeldDir is a directory whose indexed files were not seen, but kept, because the directory is
// empty or unreadable: a failed mount is not a deletion.
type HeldDir struct {
	Dir    string `json:"dir"` // relative to INDEX_DIRECTORY; "" is the files root
	Reason string `json:"reason"`
	Error  string `json:"error,omitempty"`
	Files  int    `json:"files"` // catalog paths kept below it
}

// Hold is a mass removal held until the operator confirms it.
type Hold struct {
	Since     time.Time `json:"since"`
	Paths     int       `json:"paths"`     // paths not found that were kept
	Documents int       `json:"documents"` // documents they would have made missing
	Live      int64     `json:"live"`      // live documents at the time
}

// MissingReport is what the last sync held back, and why. It is kept in the catalog
// (catalog.MetaMissingReport) for status and metrics.
type MissingReport struct {
	At        time.Time `json:"at"`
	HeldDirs  []HeldDir `json:"held_dirs"`
	HeldTotal int       `json:"held_dirs_total"` // may exceed len(HeldDirs)
	HeldFiles int       `json:"held_files"`
	// HeldUnreadable counts the held directories that were unreadable (the rest were empty).
	HeldUnreadable int   `json:"held_unreadable"`
	Hold           *Hold `json:"hold"`
}

// heldDir returns the outermost directory above rel that is held (empty or unreadable in this
// walk), or ok=false.
func (r *syncRun) heldDir(rel string) (dir string, ok bool) {
	if r.held[""] != nil {
		return "", true
	}
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		if r.held[rel[:i]] != nil {
			return rel[:i], true
		}
	}
	return "", false
}

// noteDir records a directory read by the walk with its entry count.
func (r *syncRun) noteDir(rel string, entries int) {
	if entries > 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held[rel] = &HeldDir{Dir: rel, Reason: HeldEmpty}
}

// noteUnreadableDir records a directory the walk could not open or list.
func (r *syncRun) noteUnreadableDir(rel string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held[rel] = &HeldDir{Dir: rel, Reason: HeldUnreadable, Error: err.Error()}
}

// deleteMissing handles paths not seen in this walk. Paths on absent drives stay (an unplugged
// drive's documents keep all their paths and stay searchable, offline). Paths below a
// directory that is now empty or unreadable stay too (a failed mount). The rest are removed;
// a document left with no path becomes missing (not deleted: see removePaths), unless their
// number trips the mass-removal hold, which keeps them all until the operator confirms.
func (r *syncRun) deleteMissing(ctx context.Context) error {
	confirmed, err := r.confirmed(ctx)
	if err != nil {
		return err
	}
	if confirmed { // the operator said the emptied directories are really gone
		for d, h := range r.held {
			if h.Reason == HeldEmpty {
				delete(r.held, d)
			}
		}
	}
	var gone []catalog.File
	for _, f := range r.unseen {
		p := f.Path
		if f.Drive != "" && !r.present[f.Drive] {
			r.st.KeptOffline++
			continue
		}
		if d, ok := r.heldDir(p); ok {
			r.held[d].Files++
			r.st.Held++
			continue
		}
		gone = append(gone, f)
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i].Path < gone[j].Path })
	report := MissingReport{At: r.s.cfg.Now().UTC(), HeldDirs: []HeldDir{}}
	for _, h := range r.held {
		if h.Files == 0 {
			continue // empty or unreadable, but nothing indexed was below it
		}
		report.HeldTotal++
		report.HeldFiles += h.Files
		if h.Reason == HeldUnreadable {
			report.HeldUnreadable++
		}
		report.HeldDirs = append(report.HeldDirs, *h)
	}
	sort.Slice(report.HeldDirs, func(i, j int) bool { return report.HeldDirs[i].Dir < report.HeldDirs[j].Dir })
	for _, h := range report.HeldDirs {
		ev := r.s.log.Warn().Str("dir", displayDir(h.Dir)).Str("reason", h.Reason).Int("files_kept", h.Files)
		if h.Error != "" {
			ev = ev.Str("error", h.Error)
		}
		ev.Msg("directory is " + h.Reason + "; its indexed files are kept, not removed (a failed mount is not a deletion)")
	}
	report.HeldDirs = report.HeldDirs[:min(len(report.HeldDirs), heldShown)]
	if !confirmed {
		hold, err := r.holdCheck(ctx, gone)
		if err != nil {
			return err
		}
		if hold != nil {
			report.Hold = hold
			r.st.HeldRemovals = len(gone)
			r.s.log.Warn().Int("paths", hold.Paths).Int("documents", hold.Documents).Int64("live", hold.Live).
				Msg("mass removal held: these files would go missing at once; confirm with `homeindexd sync --confirm-missing` or POST /api/missing/confirm")
			gone = nil
		}
	} else {
		r.s.log.Info().Int("paths", len(gone)).Msg("removals confirmed by the operator")
	}
	if err := r.removePaths(ctx, gone); err != nil {
		return err
	}
	b, err := json.Marshal(report)
	if err != nil {
		return err
	}
	r.s.setReport(report)
	return r.s.cat.Update(ctx, func(t *catalog.Tx) error {
		if confirmed {
			if _, err := t.TakeMissingConfirm(ctx); err != nil {
				return err
			}
		}
		return t.SetMeta(ctx, catalog.MetaMissingReport, string(b))
	})
}

func displayDir(d string) string {
	if d == "" {
		return "."
	}
	return d
}

// confirmed reports whether the operator confirmed the held removals.
func (r *syncRun) confirmed(ctx context.Context) (bool, error) {
	_, ok, err := r.s.cat.Meta(ctx, catalog.MetaMissingConfirm)
	return ok, err
}

// holdCheck returns the hold to apply when removing gone would make more than HoldShare of the
// live documents, and at least HoldMin, missing at once; nil otherwise.
func (r *syncRun) holdCheck(ctx context.Context, gone []catalog.File) (*Hold, error) {
	if r.s.cfg.HoldMin <= 0 && r.s.cfg.HoldShare <= 0 || len(gone) < r.s.cfg.HoldMin || len(gone) == 0 {
		return nil, nil
	}
	perDoc := map[string]int{}
	for _, f := range gone {
		perDoc[f.DocID]++
	}
	ids := make([]string, 0, len(perDoc))
	for id := range perDoc {
		ids = append(ids, id)
	}
	counts, err := r.s.cat.PathCounts(ctx, ids)
	if err != nil {
		return nil, err
	}
	docs := 0
	for id, n := range perDoc {
		if counts[id] <= n {
			docs++
		}
	}
	live, _, err := r.s.cat.CountDocuments(ctx)
	if err != nil {
		return nil, err
	}
	if docs < r.s.cfg.HoldMin || float64(docs) <= r.s.cfg.HoldShare*float64(live) {
		return nil, nil
	}
	h := &Hold{Since: r.s.cfg.Now().UTC(), Paths: len(gone), Documents: docs, Live: live}
	var prev MissingReport
	if ok, err := r.s.cat.MetaJSON(ctx, catalog.MetaMissingReport, &prev); err == nil && ok && prev.Hold != nil {
		h.Since = prev.Hold.Since // the same hold goes on
	}
	return h, nil
}

// removePaths deletes path rows in batches; a document left with no path becomes missing: it
// leaves the index, its by-id directory (every module's output) stays until the purge after
// MISSING_RETENTION, and it comes back as it was if its content reappears at any path.
func (r *syncRun) removePaths(ctx context.Context, gone []catalog.File) error {
	now := r.s.cfg.Now()
	for len(gone) > 0 {
		n := min(len(gone), r.s.cfg.BatchSize)
		part := gone[:n]
		gone = gone[n:]
		err := r.s.cat.Update(ctx, func(t *catalog.Tx) error {
			for _, f := range part {
				if err := t.DeleteFile(ctx, f.Path); err != nil {
					return err
				}
				if f.Drive != "" {
					r.changedDrives[f.Drive] = true
				}
				if err := t.Dirty(ctx, catalog.PathKey(f.Path), catalog.DocKey(f.DocID)); err != nil {
					return err
				}
				r.st.Deleted++
				left, err := t.DocPathCount(ctx, f.DocID)
				if err != nil {
					return err
				}
				if left > 0 {
					continue
				}
				state, err := t.DocumentState(ctx, f.DocID)
				if err != nil {
					return err
				}
				if state != catalog.DocLive {
					continue
				}
				if err := t.SetMissing(ctx, f.DocID, now); err != nil {
					return err
				}
				r.st.MissingDocs++
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// isDirError tells a directory the walk could not open or list from a per-file problem.
func isDirError(op string) bool { return op == "open" || op == "readdirent" }
