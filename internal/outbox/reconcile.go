package outbox

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/homeindex/homeindex/internal/catalog"
)

// ReconcileIndex brings a search index that lost documents, or holds stale ones, back in line
// with the catalog: a new Meilisearch (the backend switched, its volume wiped), a deleted
// embedded index file, a restore from an old backup. It runs at the outbox's first round, when
// documents a sync just found may still wait in the outbox: those are about to be written
// anyway, so only settled documents (no index write pending) are compared. It costs two
// counts; only when the index cannot be in line does it walk the catalog's and the index's ids
// and re-dirty the settled documents that differ (and the chunks of those missing, for the
// modules whose content.json is on disk), for the outbox to write. Run after the index is
// configured. modules are the configured module names. Returns how many documents it
// re-dirtied.
func (a *Applier) ReconcileIndex(ctx context.Context, modules []string) (int, error) {
	settled, pending, err := a.cat.IndexSettled(ctx)
	if err != nil {
		return 0, err
	}
	n, err := a.index.Files().Count(ctx)
	if err != nil {
		return 0, err
	}
	if n >= settled && n <= settled+pending {
		return 0, nil
	}
	skip := map[string]bool{}
	if err := a.cat.IndexPendingDocs(ctx, func(id string) error { skip[id] = true; return nil }); err != nil {
		return 0, err
	}
	live := map[string]bool{}
	if err := a.cat.DocumentIDs(ctx, func(id string, retired bool) error {
		if !retired && !skip[id] {
			live[id] = true
		}
		return nil
	}); err != nil {
		return 0, err
	}
	var keys []string
	seen := map[string]bool{}
	if err := a.index.Files().IDs(ctx, func(id string) error {
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
		for _, m := range modules {
			dir, err := a.store.ModuleDir(id, m)
			if err != nil {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, ContentFile)); err == nil {
				keys = append(keys, catalog.ChunksKey(id, m))
			} else if !errors.Is(err, fs.ErrNotExist) {
				return 0, err
			}
		}
	}
	return dirtied, a.cat.DirtyKeys(ctx, keys)
}
