package app

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/outbox"
)

// ReconcileIndex brings a search index that lost documents, or holds stale ones, back in line
// with the catalog: a new Meilisearch (the backend switched, its volume wiped), a deleted
// embedded index file, a restore from an old backup. It runs at the outbox's first round, when
// documents a sync just found may still wait in the outbox: those are about to be written
// anyway, so only settled documents (no index write pending) are compared. It costs two
// counts; only when the index cannot be in line does it walk the catalog's and the index's ids
// and re-dirty the settled documents that differ (and the chunks of those missing, for the
// modules whose content.json is on disk), for the outbox to write. Run after the index is
// configured. Returns how many documents it re-dirtied.
func (a *App) ReconcileIndex(ctx context.Context) (int, error) {
	settled, pending, err := a.Catalog.IndexSettled(ctx)
	if err != nil {
		return 0, err
	}
	n, err := a.Index.Files().Count(ctx)
	if err != nil {
		return 0, err
	}
	if n >= settled && n <= settled+pending {
		return 0, nil
	}
	skip := map[string]bool{}
	if err := a.Catalog.IndexPendingDocs(ctx, func(id string) error { skip[id] = true; return nil }); err != nil {
		return 0, err
	}
	live := map[string]bool{}
	if err := a.Catalog.DocumentIDs(ctx, func(id string, retired bool) error {
		if !retired && !skip[id] {
			live[id] = true
		}
		return nil
	}); err != nil {
		return 0, err
	}
	var keys []string
	seen := map[string]bool{}
	if err := a.Index.Files().IDs(ctx, func(id string) error {
		seen[id] = true
		if !live[id] && !skip[id] {
			keys = append(keys, catalog.DocKey(id)) // renders as gone or retired: deleted
		}
		return nil
	}); err != nil {
		return 0, err
	}
	dirtied := len(keys)
	for id := range live {
		if seen[id] {
			continue
		}
		dirtied++
		keys = append(keys, catalog.DocKey(id))
		for _, m := range a.Config.Modules {
			dir, err := a.Store.ModuleDir(id, m.Name)
			if err != nil {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, outbox.ContentFile)); err == nil {
				keys = append(keys, catalog.ChunksKey(id, m.Name))
			} else if !errors.Is(err, fs.ErrNotExist) {
				return 0, err
			}
		}
	}
	return dirtied, a.Catalog.DirtyKeys(ctx, keys)
}
