package outbox

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/metadata"
	"github.com/homeindex/homeindex/protocol"
)

// applyDocMeta writes or removes by-id/<id>. A retired document's directory is left as it is.
// raw is the live document's JSON; WriteDocument indents it as RenderDocument does.
func (a *Applier) applyDocMeta(id string, raw []byte, state catalog.DocState) bool {
	switch state {
	case catalog.DocLive:
		if _, err := a.store.WriteDocument(id, raw); err != nil {
			return a.metaFailed(err, "document.json not written", "id", id)
		}
	case catalog.DocMissing:
		if err := a.store.RemoveDocument(id); err != nil {
			return a.metaFailed(err, "metadata directory not removed", "id", id)
		}
	}
	return true
}

// applyPath points by-path/<rel> at the path's document (docs, by path), or removes it.
func (a *Applier) applyPath(docs map[string]string, rel string) bool {
	var err error
	if id, ok := docs[rel]; ok {
		err = a.store.Link(rel, id)
	} else {
		err = a.store.Unlink(rel)
	}
	if err != nil {
		return a.metaFailed(err, "by-path link not updated", "path", rel)
	}
	return true
}

// applyDrive re-evaluates a drive's marker.
func (a *Applier) applyDrive(ctx context.Context, drive string) bool {
	if a.markers == nil {
		return true
	}
	present, err := a.cat.Drives(ctx)
	if err == nil {
		err = a.markers.Update(ctx, drive, present[drive], false)
	}
	if err != nil {
		a.log.Warn().Str("drive", drive).Err(err).Msg("drive marker not updated; will retry")
		return false
	}
	return true
}

// RenderDocument is document.json's bytes: indented by 4 spaces like upstream.
func RenderDocument(doc protocol.Document) ([]byte, error) {
	b, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// metaFailed logs a failed metadata write. It returns true (done, nothing to retry) for errors
// that no retry can fix, such as an id or path the metadata directory refuses.
func (a *Applier) metaFailed(err error, what, key, value string) bool {
	if errors.Is(err, metadata.ErrInvalidID) || errors.Is(err, metadata.ErrInvalidPath) {
		a.log.Error().Str(key, value).Err(err).Msg(what + "; not retried")
		return true
	}
	a.log.Warn().Str(key, value).Err(err).Msg(what + "; will retry")
	return false
}
