package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// writeIndex sends one round's index changes: live documents replaced whole, deleted and
// retired ones removed together with their chunks.
func (a *Applier) writeIndex(ctx context.Context, upserts []json.RawMessage, deletes []string) error {
	if len(upserts) > 0 {
		if err := a.index.Files().Upsert(ctx, upserts); err != nil {
			return fmt.Errorf("upsert %d documents: %w", len(upserts), err)
		}
	}
	if len(deletes) > 0 {
		if err := a.index.Files().Delete(ctx, deletes); err != nil {
			return fmt.Errorf("delete %d documents: %w", len(deletes), err)
		}
		if err := a.index.Chunks().DeleteByFilter(ctx, fileIDFilter(deletes)); err != nil {
			return fmt.Errorf("delete chunks of %d documents: %w", len(deletes), err)
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
