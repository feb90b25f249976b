package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/chunk"
)

// Module output file names.
const (
	ContentFile = "content.json"
	ChunksFile  = "chunks.json"
)

// applyChunks rebuilds one module's chunks of one document from its content.json: chunks.json
// on disk (the metadata part) and the chunk index, where the file's old chunks for that module
// are replaced (the index part). A document that is gone or retired only loses its chunks.
func (a *Applier) applyChunks(ctx context.Context, e *catalog.OutboxEntry, indexOK bool) error {
	id, module, ok := strings.Cut(strings.TrimPrefix(e.Key, catalog.KeyChunks), "/")
	if !ok {
		e.MetaDone, e.IndexDone = true, true
		return nil
	}
	doc, state, err := a.cat.Document(ctx, id)
	if err != nil {
		return err
	}
	var docs []json.RawMessage
	if state == catalog.DocLive {
		chunks, err := a.buildChunks(id, module, doc.Mtime)
		if err != nil {
			a.log.Error().Str("id", id).Str("module", module).Err(err).Msg("content not chunked")
			e.MetaDone, e.IndexDone = true, true // bad content does not get better by retrying
			return nil
		}
		if !e.MetaDone {
			b, err := json.MarshalIndent(chunks, "", "    ")
			if err == nil {
				err = a.store.WriteModuleFile(id, module, ChunksFile, append(b, '\n'))
			}
			e.MetaDone = err == nil || a.metaFailed(err, "chunks.json not written", "id", id)
		}
		for _, c := range chunks {
			b, err := json.Marshal(c)
			if err != nil {
				return err
			}
			docs = append(docs, b)
		}
	} else {
		e.MetaDone = true
	}
	if e.IndexDone || !indexOK {
		return nil
	}
	filter := fmt.Sprintf(`file_id = %q AND module = %q`, id, module)
	if err := a.index.Chunks().DeleteByFilter(ctx, filter); err != nil {
		return indexError{err}
	}
	if len(docs) > 0 {
		if err := a.index.Chunks().Upsert(ctx, docs); err != nil {
			return indexError{err}
		}
	}
	e.IndexDone = true
	return nil
}

// indexError marks a search-backend failure: the round stops writing to the index.
type indexError struct{ err error }

func (e indexError) Error() string { return e.err.Error() }
func (e indexError) Unwrap() error { return e.err }

// buildChunks reads content.json and chunks it. No content file: no chunks.
func (a *Applier) buildChunks(id, module string, mtime float64) ([]chunk.Doc, error) {
	dir, err := a.store.ModuleDir(id, module)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, ContentFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	segs, err := chunk.ParseContent(raw, chunk.DefaultLimits)
	if err != nil {
		return nil, err
	}
	return chunk.Chunks(id, module, mtime, segs, a.ChunkOptions), nil
}
