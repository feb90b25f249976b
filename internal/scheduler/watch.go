package scheduler

import (
	"context"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/drives"
)

// Watch triggers early syncs on file-system events in dirs (not recursive: the files root and
// the archive directory, so new top-level files and drives that are plugged in or out are seen
// at once; deeper changes wait for the cron walk, which stays the source of truth). Missing
// directories are skipped. Returns when ctx ends.
func Watch(ctx context.Context, s *Scheduler, log zerolog.Logger, dirs ...string) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	n := 0
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		if err := w.Add(d); err != nil {
			log.Warn().Str("dir", d).Err(err).Msg("cannot watch directory; cron syncs still cover it")
			continue
		}
		n++
	}
	if n == 0 {
		<-ctx.Done()
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if drives.IsMarker(filepath.Base(ev.Name)) {
				continue // our own marker writes
			}
			log.Debug().Str("path", ev.Name).Str("op", ev.Op.String()).Msg("file event")
			s.Trigger("file event")
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			log.Warn().Err(err).Msg("file watcher error")
		}
	}
}
