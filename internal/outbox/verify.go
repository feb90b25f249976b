package outbox

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/homeindex/homeindex/internal/catalog"
)

// Verify compares the catalog with the metadata directory and the search index this Applier
// writes, and returns
// every disagreement (empty when they agree exactly): each live document has a document.json
// equal to its rendering and is in the index; each missing (retired) one has a directory, no
// path and a missing-since time, and is not in the index; no other by-id directory or index entry exists; each path has a by-path link to
// its document and no other link exists. Run it when the outbox is drained.
func (a *Applier) Verify(ctx context.Context) ([]string, error) {
	var problems []string
	addf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	docs := map[string]bool{} // id → retired
	if err := a.cat.DocumentIDs(ctx, func(id string, retired bool) error {
		docs[id] = retired
		return nil
	}); err != nil {
		return nil, err
	}
	if err := a.cat.MissingSince(ctx, func(id string, since time.Time, paths int) error {
		switch {
		case !docs[id]:
			addf("document %s has a missing-since time but is live", id)
		case since.IsZero():
			addf("missing document %s has no missing-since time", id)
		case paths > 0:
			addf("missing document %s still has %d paths", id, paths)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	onDisk := map[string]bool{}
	if err := a.store.DocumentIDs(func(id string) error { onDisk[id] = true; return nil }); err != nil {
		return nil, err
	}
	indexed := map[string]bool{}
	if err := a.index.Files().IDs(ctx, func(id string) error { indexed[id] = true; return nil }); err != nil {
		return nil, err
	}
	for id, retired := range docs {
		if !onDisk[id] {
			addf("document %s: no document.json", id)
		}
		if retired {
			if indexed[id] {
				addf("retired document %s is in the index", id)
			}
			continue
		}
		if !indexed[id] {
			addf("document %s is not in the index", id)
		}
		if err := a.verifyDocumentJSON(ctx, id); err != nil {
			addf("document %s: %v", id, err)
		}
	}
	for id := range onDisk {
		if _, ok := docs[id]; !ok {
			addf("by-id/%s has no catalog document", id)
		}
	}
	for id := range indexed {
		if r, ok := docs[id]; !ok || r {
			addf("index entry %s has no live catalog document", id)
		}
	}
	files := map[string]string{}
	if err := a.cat.Files(ctx, func(f catalog.File) error { files[f.Path] = f.DocID; return nil }); err != nil {
		return nil, err
	}
	links := map[string]string{}
	if err := a.store.Links(func(rel, id string) error { links[rel] = id; return nil }); err != nil {
		return nil, err
	}
	for p, id := range files {
		if links[p] != id {
			addf("by-path/%s: want link to %s, have %q", p, id, links[p])
		}
	}
	for p := range links {
		if _, ok := files[p]; !ok {
			addf("by-path/%s: no catalog path", p)
		}
	}
	sort.Strings(problems)
	return problems, nil
}

func (a *Applier) verifyDocumentJSON(ctx context.Context, id string) error {
	doc, _, err := a.cat.Document(ctx, id)
	if err != nil {
		return err
	}
	want, err := RenderDocument(doc)
	if err != nil {
		return err
	}
	have, err := a.store.ReadDocument(id)
	if err != nil {
		return err
	}
	if string(have) != string(want) {
		return fmt.Errorf("document.json differs from the catalog")
	}
	return nil
}
