package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/search"
)

// indexWrite gathers one round's index changes.
type indexWrite struct {
	upserts []json.RawMessage // live documents, replaced whole
	deletes []string          // documents gone or retired: removed with their chunks
	// chunksOf names the (module → documents) whose chunks are replaced by chunks.
	chunksOf map[string][]string
	chunks   []json.RawMessage
	at       []int // the entries this write completes
	// The upserts' preparation (prepare), and its failure, which writeIndex reports as the
	// write's.
	prepared       bool
	files, chunked search.PreparedUpsert
	prepErr        error
}

func (w *indexWrite) empty() bool { return len(w.at) == 0 }

// document adds a doc: key's index part; raw is the live document's JSON.
func (w *indexWrite) document(i int, id string, state catalog.DocState, raw []byte) {
	w.at = append(w.at, i)
	if state != catalog.DocLive {
		w.deletes = append(w.deletes, id)
		return
	}
	w.upserts = append(w.upserts, raw)
}

// replaceChunks adds a chunks: key's index part: id's chunks of module become docs.
func (w *indexWrite) replaceChunks(i int, id, module string, docs []json.RawMessage) {
	w.at = append(w.at, i)
	if w.chunksOf == nil {
		w.chunksOf = map[string][]string{}
	}
	w.chunksOf[module] = append(w.chunksOf[module], id)
	w.chunks = append(w.chunks, docs...)
}

// prepare does the CPU work of the write's upserts (search.PrepareUpsert) ahead of writeIndex,
// so it runs beside the previous round's index write instead of before this round's. A
// failure is kept for writeIndex to report.
func (a *Applier) prepare(w *indexWrite) {
	w.prepared = true
	if len(w.upserts) > 0 {
		if w.files, w.prepErr = search.PrepareUpsert(a.index.Files(), w.upserts); w.prepErr != nil {
			w.prepErr = fmt.Errorf("upsert %d documents: %w", len(w.upserts), w.prepErr)
			return
		}
	}
	if len(w.chunks) > 0 {
		// The chunks are json.Marshal's (applyChunks).
		if w.chunked, w.prepErr = search.PrepareMarshaled(a.index.Chunks(), w.chunks); w.prepErr != nil {
			w.prepErr = fmt.Errorf("upsert %d chunks: %w", len(w.chunks), w.prepErr)
		}
	}
}

// writeIndex sends one round's index changes: live documents replaced whole, deleted and
// retired ones removed together with their chunks, then each rebuilt chunk set replaced (old
// chunks of those documents and modules deleted, new ones added).
func (a *Applier) writeIndex(ctx context.Context, w *indexWrite) error {
	if indexWritesSkipped {
		return nil
	}
	if !w.prepared {
		a.prepare(w)
	}
	if w.prepErr != nil {
		return w.prepErr
	}
	if w.files != nil {
		if err := w.files.Write(ctx); err != nil {
			return fmt.Errorf("upsert %d documents: %w", len(w.upserts), err)
		}
	}
	if len(w.deletes) > 0 {
		if err := a.index.Files().Delete(ctx, w.deletes); err != nil {
			return fmt.Errorf("delete %d documents: %w", len(w.deletes), err)
		}
		if err := a.index.Chunks().DeleteByFilter(ctx, fileIDFilter(w.deletes)); err != nil {
			return fmt.Errorf("delete chunks of %d documents: %w", len(w.deletes), err)
		}
	}
	if len(w.chunksOf) > 0 {
		if err := a.index.Chunks().DeleteByFilter(ctx, moduleChunksFilter(w.chunksOf)); err != nil {
			return fmt.Errorf("delete old chunks: %w", err)
		}
	}
	if w.chunked != nil {
		if err := w.chunked.Write(ctx); err != nil {
			return fmt.Errorf("upsert %d chunks: %w", len(w.chunks), err)
		}
	}
	return nil
}

// fileIDFilter builds `file_id IN ["a", "b"]`. Ids are [A-Za-z0-9_-] (metadata.ValidID), so
// quoting needs no escapes.
func fileIDFilter(ids []string) string {
	var b strings.Builder
	b.WriteString("file_id IN [")
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"` + id + `"`)
	}
	b.WriteString("]")
	return b.String()
}

// moduleChunksFilter builds `(module = "m1" AND file_id IN [...]) OR (module = "m2" AND ...)`,
// modules in order. Module names are [a-z0-9_-] (metadata.ValidModuleName).
func moduleChunksFilter(byModule map[string][]string) string {
	modules := make([]string, 0, len(byModule))
	for m := range byModule {
		modules = append(modules, m)
	}
	slices.Sort(modules)
	parts := make([]string, len(modules))
	for i, m := range modules {
		parts[i] = fmt.Sprintf(`(module = %q AND %s)`, m, fileIDFilter(byModule[m]))
	}
	return strings.Join(parts, " OR ")
}
