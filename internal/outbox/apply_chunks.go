package outbox

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/chunk"
)

// Module output file names.
const (
	ContentFile = "content.json"
	ChunksFile  = "chunks.json"
)

// applyChunks rebuilds one module's chunks of one document from its content.json: chunks.json
// on disk (the metadata part) now, and in the chunk index, where the file's old chunks for that
// module are replaced, with the round's index write (w). A document that is gone or retired
// only loses its chunks.
func (a *Applier) applyChunks(i int, e *catalog.OutboxEntry, docs map[string]catalog.Rendered, w *indexWrite) error {
	id, module, ok := catalog.ParseChunksKey(e.Key)
	if !ok {
		e.MetaDone, e.IndexDone = true, true
		return nil
	}
	var out []json.RawMessage
	if r, ok := docs[id]; ok && r.State == catalog.DocLive {
		chunks, err := a.buildChunks(id, module, r.Doc.Mtime)
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
			out = append(out, b)
		}
	} else {
		e.MetaDone = true
	}
	if !e.IndexDone {
		w.replaceChunks(i, id, module, out)
	}
	return nil
}

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
	return chunk.Chunks(id, module, mtime, segs, a.cfg.Chunk), nil
}
