package app

import (
	"path/filepath"
	"strings"

	"github.com/homeindex/homeindex/internal/drives"
	"github.com/homeindex/homeindex/internal/logging"
	"github.com/homeindex/homeindex/internal/watch"
)

// NewWatcher builds the change watcher over INDEX_DIRECTORY and ARCHIVE_DIRECTORY (drives
// included); onChange is called once a batch of changes has settled. The metadata and state
// directories and the drives' markers, which the daemon writes itself, are left out so that
// a sync never triggers the next one. Status reads it through WatchStatus.
func (a *App) NewWatcher(onChange func(reason string)) *watch.Watcher {
	cfg := a.Config
	roots := []string{cfg.IndexDirectory}
	if !within(cfg.ArchiveDirectory, cfg.IndexDirectory) {
		roots = append(roots, cfg.ArchiveDirectory)
	}
	skipDirs := []string{cfg.MetadataDirectory, cfg.StateDirectory}
	skip := func(p string) bool {
		for _, d := range skipDirs {
			if within(p, d) {
				return true
			}
		}
		return drives.IsMarker(filepath.Base(p))
	}
	budget, _ := watch.Budget(cfg.Watch.Limit, cfg.Watch.Percent)
	a.watcher = watch.New(watch.Config{Roots: roots, Skip: skip, Budget: budget, Rewalk: cfg.Watch.Rewalk,
		Settle: cfg.Watch.Settle, OnChange: onChange, Log: logging.Component(a.Log, "watch")})
	return a.watcher
}

// WatchStatus is the change watcher's status, or nil when this process runs none.
func (a *App) WatchStatus() *watch.Status {
	if a.watcher == nil {
		return nil
	}
	st := a.watcher.Status()
	return &st
}

// within says whether p is dir or lies below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
