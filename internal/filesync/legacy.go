package filesync

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/drives"
	"github.com/homeindex/homeindex/internal/metadata"
	"github.com/homeindex/homeindex/protocol"
)

// ImportLegacy imports a metadata directory written by the original Python implementation when
// the catalog is empty, so legacy documents (and their module fields) stay searchable. Paths get
// no stat: the first sync confirms each one without reading it when its size and truncated mtime
// still match (upstream's determine_hash rule), or hashes it otherwise. Returns the number of
// documents imported.
func ImportLegacy(ctx context.Context, cat *catalog.Catalog, store *metadata.Store, archiveRel string, log zerolog.Logger) (int, error) {
	if _, done, err := cat.Meta(ctx, catalog.MetaImported); err != nil || done {
		return 0, err
	}
	live, retired, err := cat.CountDocuments(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	if live+retired == 0 {
		var batch []protocol.Document
		flush := func() error {
			err := cat.Update(ctx, func(t *catalog.Tx) error {
				for _, d := range batch {
					if err := importOne(ctx, t, d, archiveRel); err != nil {
						return err
					}
				}
				return nil
			})
			n += len(batch)
			batch = batch[:0]
			return err
		}
		err = store.LegacyDocuments(func(d protocol.Document) error {
			batch = append(batch, d)
			if len(batch) >= 1000 {
				return flush()
			}
			return nil
		}, func(path string, err error) {
			log.Warn().Str("file", path).Err(err).Msg("legacy document not imported")
		})
		if err == nil && len(batch) > 0 {
			err = flush()
		}
		if err != nil {
			return n, fmt.Errorf("import legacy metadata: %w", err)
		}
		if n > 0 {
			log.Info().Int("documents", n).Msg("imported legacy metadata directory")
		}
	}
	return n, cat.Update(ctx, func(t *catalog.Tx) error { return t.SetMeta(ctx, catalog.MetaImported, "1") })
}

func importOne(ctx context.Context, t *catalog.Tx, d protocol.Document, archiveRel string) error {
	version := d.Version
	if version < protocol.CurrentVersion {
		version = protocol.CurrentVersion
	}
	if _, err := t.InsertDocument(ctx, catalog.DocRow{ID: d.ID, Type: d.Type, Size: d.Size, Next: d.Next,
		Fields: d.Fields, Version: version}); err != nil {
		return err
	}
	for _, p := range d.Paths {
		drive, _ := drives.DriveOf(archiveRel, p.Path)
		if err := t.PutFile(ctx, catalog.File{Path: p.Path, DocID: d.ID, Size: d.Size, Mtime: p.Mtime, Drive: drive}); err != nil {
			return err
		}
		if err := t.Dirty(ctx, catalog.PathKey(p.Path)); err != nil {
			return err
		}
	}
	return t.Dirty(ctx, catalog.DocKey(d.ID))
}
