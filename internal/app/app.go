// Package app assembles the daemon's components (catalog, metadata directory, search index,
// sync, outbox, and the module pipeline with NewPipeline) so that the command and the tests
// build the same thing. It decides nothing itself: each rule lives in the package that owns
// its data (docs/architecture.md has the map).
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/chunk"
	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/internal/drives"
	"github.com/homeindex/homeindex/internal/filesync"
	"github.com/homeindex/homeindex/internal/logging"
	"github.com/homeindex/homeindex/internal/metadata"
	"github.com/homeindex/homeindex/internal/outbox"
	"github.com/homeindex/homeindex/internal/pipeline"
	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/internal/watch"
)

// Files in STATE_DIRECTORY.
const (
	catalogFile     = "catalog.db"
	searchIndexFile = "search.db"
)

// App holds the daemon's open components.
type App struct {
	Config  *config.Config
	Log     zerolog.Logger
	Catalog *catalog.Catalog
	Store   *metadata.Store
	Index   search.Index
	Markers *filesync.Markers
	Syncer  *filesync.Syncer
	Outbox  *outbox.Applier
	watcher *watch.Watcher // the change watcher while `run` runs one (NewWatcher), else nil

	pipe atomic.Pointer[pipeline.Pipeline] // the last NewPipeline's, told when a drive appears

	stateLock func() // releases STATE_DIRECTORY's lock (HoldStateLock); nil when not held

	syncs syncState // last sync and counts, for status (progress.go)
}

// DrivePresence returns the drives' presence as the catalog in STATE_DIRECTORY last recorded
// it (the running daemon keeps it current), read without opening the catalog for writing.
func DrivePresence(ctx context.Context, cfg *config.Config) (map[string]bool, error) {
	return catalog.ReadDrives(ctx, CatalogFile(cfg))
}

// CatalogFile is the catalog's path.
func CatalogFile(cfg *config.Config) string {
	return filepath.Join(cfg.StateDirectory, catalogFile)
}

// Open opens the catalog, metadata directory and search index and wires the sync path.
func Open(ctx context.Context, cfg *config.Config, log zerolog.Logger) (*App, error) {
	if err := os.MkdirAll(cfg.StateDirectory, 0o755); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	cat, err := catalog.Open(filepath.Join(cfg.StateDirectory, catalogFile))
	if err != nil {
		return nil, err
	}
	a := &App{Config: cfg, Log: log, Catalog: cat}
	if a.Store, err = metadata.Open(cfg.MetadataDirectory); err != nil {
		a.Close()
		return nil, err
	}
	a.Store.DeferSync() // the outbox flushes once per round
	if err := a.Store.CleanTemp(); err != nil {
		log.Warn().Err(err).Msg("stale temporary files not removed")
	}
	if a.Index, err = OpenIndex(ctx, cfg); err != nil {
		a.Close()
		return nil, err
	}
	for _, u := range search.Upgrades(a.Index) {
		log.Info().Str("upgrade", u).Msg("search index: upgraded the layout an earlier version wrote")
	}
	if wrapIndex != nil {
		a.Index = wrapIndex(cfg, a.Index)
	}
	archive := drives.New(cfg.ArchiveDirectory)
	if err := archive.CleanTemp(); err != nil {
		log.Warn().Err(err).Msg("stale marker temporary files not removed")
	}
	a.Markers = filesync.NewMarkers(cat, archive, logging.Component(log, "drives"))
	a.Syncer = filesync.New(filesync.Config{
		Root:        cfg.IndexDirectory,
		ArchiveRel:  cfg.ArchiveRel,
		SkipRel:     []string{cfg.MetadataRel, cfg.StateRel},
		HashWorkers: cfg.Pipeline.HashWorkers,
		FirstModule: func() string { return firstModule(cfg) },
		Recorded:    func() { a.Outbox.Wake() }, // set below, before any sync
		HoldShare:   cfg.Missing.HoldShare,
		HoldMin:     cfg.Missing.HoldMin,
		SettleTime:  cfg.Watch.Settle,
		DriveAppeared: func(string) {
			if p := a.pipe.Load(); p != nil {
				p.DriveAppeared()
			}
		},
	}, cat, archive, a.Markers, logging.Component(log, "sync"))
	a.Outbox = outbox.New(outbox.Config{
		Chunk:    chunk.Options{Tokens: cfg.Pipeline.ChunkTokens, Overlap: cfg.Pipeline.ChunkOverlap},
		LockFile: filepath.Join(cfg.StateDirectory, outboxLockFile),
		Configure: func(ctx context.Context) error {
			if err := ConfigureIndex(ctx, a.Index, cfg); err != nil {
				return err
			}
			n, err := a.Outbox.ReconcileIndex(ctx, cfg.ModuleNames())
			if err != nil {
				return fmt.Errorf("reconcile search index: %w", err)
			}
			if n > 0 {
				a.Log.Warn().Int("documents", n).Str("index", a.Index.Name()).
					Msg("search index disagreed with the catalog; re-indexing those documents")
			}
			return nil
		},
	}, cat, a.Store, a.Index, a.Markers, logging.Component(log, "outbox"))
	return a, nil
}

// NewPipeline builds the module pipeline over this App's catalog, metadata directory and
// outbox (nil without MODULES); drives appearing in a sync are reported to it. onFinished,
// when set, is called after each job the merger finishes (pipeline.Config.OnFinished).
func (a *App) NewPipeline(onFinished func(module, docID string)) *pipeline.Pipeline {
	p := pipeline.New(pipeline.Config{Daemon: a.Config, Catalog: a.Catalog, Store: a.Store, Outbox: a.Outbox,
		Log: a.Log, Predecessor: a.predecessor, OnFinished: onFinished})
	if p != nil {
		a.pipe.Store(p)
	}
	return p
}

// wrapIndex, when set (by tests only), wraps the index Open opened, e.g. to count its writes.
var wrapIndex func(cfg *config.Config, idx search.Index) search.Index

func firstModule(cfg *config.Config) string {
	if len(cfg.Modules) == 0 {
		return ""
	}
	return cfg.Modules[0].Name
}

// OpenIndex opens the embedded index, or Meilisearch when MEILISEARCH_HOST is set. Files
// documents written through it get their derived search fields (search.PrepareFile).
func OpenIndex(ctx context.Context, cfg *config.Config) (search.Index, error) {
	ix, err := openBackend(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return search.WithFileDocuments(ix, cfg.ArchiveRel), nil
}

// SearchIndexFile is the embedded index's path.
func SearchIndexFile(cfg *config.Config) string {
	return filepath.Join(cfg.StateDirectory, searchIndexFile)
}

func openBackend(ctx context.Context, cfg *config.Config) (search.Index, error) {
	if cfg.Meilisearch.Host == "" {
		return search.OpenEmbedded(SearchIndexFile(cfg))
	}
	return search.OpenMeilisearch(ctx, search.MeiliConfig{
		Host:        cfg.Meilisearch.Host,
		APIKey:      cfg.Meilisearch.APIKey,
		FilesIndex:  cfg.Meilisearch.IndexName,
		ChunksIndex: cfg.Meilisearch.ChunkIndexName,
		Timeout:     30 * time.Second,
	})
}

// Core index attributes (issue: filterable id, next, type, size, mtime, copies, paths_list,
// has_archive_paths, offline; sortable mtime, size, copies), plus each module's own.
var (
	coreFilterable = []string{"id", "next", "type", "size", "mtime", "copies", "paths_list", "has_archive_paths", "offline"}
	coreSortable   = []string{"mtime", "size", "copies"}
)

func indexSettings(cfg *config.Config) search.Settings {
	s := search.Settings{Filterable: append([]string{}, coreFilterable...), Sortable: append([]string{}, coreSortable...)}
	for _, m := range cfg.Modules {
		s.Filterable = append(s.Filterable, m.FilterableAttributes...)
		s.Sortable = append(s.Sortable, m.SortableAttributes...)
	}
	return search.FileSettings(s)
}

// FacetAttributes are the facets a search counts: the derived ones (search.DefaultFacets)
// and every attribute a module declares filterable.
func FacetAttributes(cfg *config.Config) []string {
	out := slices.Clone(search.DefaultFacets)
	for _, m := range cfg.Modules {
		for _, a := range m.FilterableAttributes {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// ConfigureIndex applies the files and chunks index settings.
func ConfigureIndex(ctx context.Context, idx search.Index, cfg *config.Config) error {
	if err := idx.Files().Configure(ctx, indexSettings(cfg)); err != nil {
		return fmt.Errorf("configure files index: %w", err)
	}
	if err := idx.Chunks().Configure(ctx, search.ChunkSettings); err != nil {
		return fmt.Errorf("configure chunks index: %w", err)
	}
	return nil
}

// ImportLegacy imports an upstream metadata directory into an empty catalog.
func (a *App) ImportLegacy(ctx context.Context) error {
	_, err := filesync.ImportLegacy(ctx, a.Catalog, a.Store, a.Config.ArchiveRel, logging.Component(a.Log, "import"))
	return err
}

// SyncOnce runs one sync and logs its summary line, then wakes the outbox.
func (a *App) SyncOnce(ctx context.Context, reason string) (filesync.Stats, error) {
	a.Log.Info().Str("reason", reason).Msg("start file sync")
	stop := a.logProgress(ProgressEvery)
	st, err := a.Syncer.Sync(ctx)
	stop()
	a.recordSync(ctx, reason, st, err)
	a.Outbox.Wake()
	ev := a.Log.Info()
	if err != nil {
		ev = a.Log.Error().Err(err)
	}
	ev.Str("reason", reason).Dur("duration", st.Duration).Int("walked", st.Walked).Int("hashed", st.Hashed).
		Int("unchanged", st.Unchanged).Int("added", st.Added).Int("modified", st.Modified).Int("deleted", st.Deleted).
		Int("kept_offline", st.KeptOffline).Int("new_documents", st.NewDocs).Int("missing_documents", st.MissingDocs).
		Int("returned_documents", st.ReturnedDocs).Int("held", st.Held).Int("held_removals", st.HeldRemovals).
		Int("errors", st.Errors).Int("unsettled", st.Unsettled).Msg("completed file sync")
	return st, err
}

// BeginFirstLoad readies the search index for the first sync of a tree (the catalog holds no
// path yet: every file is new) with search.BeginLoad, and returns what ends the load, to call
// once the sync's changes are applied (the outbox drained). `homeindexd sync` uses it; the
// daemon uses BeginDaemonFirstLoad. For any other sync the returned func does nothing.
func (a *App) BeginFirstLoad(ctx context.Context) (end func()) {
	if end, ok := a.beginFirstLoad(ctx); ok {
		return end
	}
	return func() {}
}

// BeginDaemonFirstLoad is BeginFirstLoad for `homeindexd run`, whose first sync is the one
// most users wait for; it returns what the scheduler calls after every sync. The daemon cannot
// wait for an empty outbox, which its modules keep dirtying, so the load ends after the first
// sync, whatever its outcome, once one Drain has applied what that sync recorded. Module results
// merged meanwhile are written as in any load (inserted first, else updated); a sync that comes
// later indexes its new files one by one, as every later sync does. For a daemon whose catalog
// already holds paths, the returned func does nothing.
func (a *App) BeginDaemonFirstLoad(ctx context.Context) (afterSync func(context.Context)) {
	end, ok := a.beginFirstLoad(ctx)
	if !ok {
		return func(context.Context) {}
	}
	var once sync.Once
	return func(ctx context.Context) {
		once.Do(func() {
			if _, err := a.Outbox.Drain(ctx); err != nil && ctx.Err() == nil {
				a.Log.Warn().Err(err).Msg("outbox drain after the first sync failed; the search index's indexes are built anyway")
			}
			end()
		})
	}
}

// beginFirstLoad begins the load when the catalog holds no path, and says whether it did.
func (a *App) beginFirstLoad(ctx context.Context) (end func(), ok bool) {
	if n, err := a.Catalog.CountFiles(ctx); err != nil || n > 0 {
		return nil, false // an error here is the sync's to report
	}
	endLoad, err := search.BeginLoad(ctx, a.Index)
	if err != nil {
		a.Log.Warn().Err(err).Msg("search index not readied for the first sync; documents are indexed one by one")
		return nil, false
	}
	return func() {
		start := time.Now()
		if err := endLoad(ctx); err != nil {
			a.Log.Warn().Err(err).Msg("search index: building its indexes after the first sync failed; the next start builds them")
			return
		}
		a.Log.Info().Dur("took", time.Since(start)).Msg("search index: indexes built after the first sync")
	}, true
}

// Verify compares the catalog with the metadata directory and the search index
// (outbox.Applier.Verify); run it when the outbox is drained.
func (a *App) Verify(ctx context.Context) ([]string, error) { return a.Outbox.Verify(ctx) }

// Close closes the index and the catalog.
func (a *App) Close() error {
	var errs []error
	if a.Index != nil {
		errs = append(errs, a.Index.Close())
	}
	if a.Catalog != nil {
		errs = append(errs, a.Catalog.Close())
	}
	if a.stateLock != nil {
		a.stateLock()
		a.stateLock = nil
	}
	return errors.Join(errs...)
}
