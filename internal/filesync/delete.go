package filesync

import (
	"context"
	"sort"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/protocol"
)

const versionCurrent = protocol.CurrentVersion

// deleteMissing removes paths not seen in this walk, except paths on absent drives: those stay,
// so an unplugged drive's documents keep all their paths and stay searchable (offline).
func (r *syncRun) deleteMissing(ctx context.Context) error {
	var gone []catalog.File
	for p, f := range r.files {
		if r.seen[p] {
			continue
		}
		if f.Drive != "" && !r.present[f.Drive] {
			r.st.KeptOffline++
			continue
		}
		gone = append(gone, f)
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i].Path < gone[j].Path })
	return r.removePaths(ctx, gone)
}

// removePaths deletes path rows in batches; documents left with no path are deleted.
func (r *syncRun) removePaths(ctx context.Context, gone []catalog.File) error {
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
				if err := t.DeleteDocument(ctx, f.DocID); err != nil {
					return err
				}
				r.st.DeletedDocs++
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
