package filesync

import (
	"context"
	"strings"

	"github.com/homeindex/homeindex/internal/catalog"
)

// detectRenamedDrives handles a drive whose label changed: an absent drive D whose every path
// reappears, with the same content at the same place, on a drive E that appeared in this sync,
// is D renamed to E. D's paths are dropped (their documents keep E's paths) and D is forgotten,
// so its marker goes away. Only runs when a drive appeared, so it costs nothing otherwise.
func (r *syncRun) detectRenamedDrives(ctx context.Context) error {
	if len(r.newDrives) == 0 {
		return nil
	}
	known, err := r.s.cat.Drives(ctx)
	if err != nil {
		return err
	}
	prefix := r.s.cfg.ArchiveRel + "/"
	for old, present := range known {
		if present {
			continue
		}
		var oldFiles []catalog.File
		var renamedTo string
		err := r.s.cat.Update(ctx, func(t *catalog.Tx) error {
			fs, err := t.DrivePaths(ctx, old)
			if err != nil || len(fs) == 0 {
				return err
			}
			for nd := range r.newDrives {
				if nd == old {
					continue
				}
				all := true
				for _, f := range fs {
					rest := strings.TrimPrefix(f.Path, prefix+old+"/")
					id, ok, err := t.FileDoc(ctx, prefix+nd+"/"+rest)
					if err != nil {
						return err
					}
					if !ok || id != f.DocID {
						all = false
						break
					}
				}
				if all {
					oldFiles, renamedTo = fs, nd
					return nil
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if renamedTo == "" {
			continue
		}
		r.s.log.Info().Str("from", old).Str("to", renamedTo).Int("files", len(oldFiles)).Msg("drive renamed")
		if err := r.removePaths(ctx, oldFiles); err != nil {
			return err
		}
		if err := r.s.cat.Update(ctx, func(t *catalog.Tx) error { return t.DeleteDrive(ctx, old) }); err != nil {
			return err
		}
		r.changedDrives[old] = true
	}
	return nil
}
