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
// embedded index file, a restore from an old backup. It costs two counts; only when they
// differ does it walk the catalog's and the index's ids and re-dirty the documents that differ
// (and the chunks of those missing, for the modules whose content.json is on disk), for the
// outbox to write. Run after the index is configured.
// Returns how many documents it re-dirtied.
func (a *App) ReconcileIndex(ctx context.Context) (int, error) {
	nLive, _, err := a.Catalog.CountDocuments(ctx)
	if err != nil {
		return 0, err
	}
	n, err := a.Index.Files().Count(ctx)
	if err != nil {
		return 0, err
	}
	if n == nLive {
		return 0, nil
	}
	live := map[string]bool{}
	if err := a.Catalog.DocumentIDs(ctx, func(id string, retired bool) error {
		if !retired {
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
		if !live[id] {
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
