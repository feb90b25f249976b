package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meilisearch/meilisearch-go"
)

// meiliCollection is one Meilisearch index.
type meiliCollection struct {
	ix  *meiliIndex
	uid string
}

var _ Collection = (*meiliCollection)(nil)

// index returns a fresh handle: meilisearch-go's index handles keep mutable state, so none
// is shared between goroutines.
func (c *meiliCollection) index() meilisearch.IndexManager { return c.ix.client.Index(c.uid) }

// ensureIndex creates the index with primary key "id", or checks the existing one.
func (c *meiliCollection) ensureIndex(ctx context.Context) error {
	rctx, cancel := c.ix.requestCtx(ctx)
	info, err := c.ix.client.CreateIndexWithContext(rctx, &meilisearch.IndexConfig{Uid: c.uid, PrimaryKey: "id"})
	cancel()
	if err != nil {
		return c.ix.classify("create index "+c.uid, err)
	}
	err = c.ix.waitTask(ctx, "create index "+c.uid, info)
	var te *TaskError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &te) || te.Code != "index_already_exists":
		return err
	}
	rctx, cancel = c.ix.requestCtx(ctx)
	res, err := c.ix.client.GetIndexWithContext(rctx, c.uid)
	cancel()
	if err != nil {
		return c.ix.classify("get index "+c.uid, err)
	}
	switch res.PrimaryKey {
	case "id":
		return nil
	case "":
		// Created elsewhere without a key: set it (Meilisearch allows that while the index
		// is empty; otherwise the task fails and says why).
		rctx, cancel = c.ix.requestCtx(ctx)
		info, err := c.index().UpdateIndexWithContext(rctx, &meilisearch.UpdateIndexRequestParams{PrimaryKey: "id"})
		cancel()
		if err != nil {
			return c.ix.classify("set primary key of "+c.uid, err)
		}
		return c.ix.waitTask(ctx, "set primary key of "+c.uid, info)
	}
	return fmt.Errorf("index %s has primary key %q, want \"id\"", c.uid, res.PrimaryKey)
}

// Configure updates filterable and sortable attributes, the ranking rules and the settings
// that keep indexing cheap, but only those that differ from the server's settings, and waits
// for the tasks.
func (c *meiliCollection) Configure(ctx context.Context, s Settings) error {
	op := "configure " + c.uid
	s, err := normalizeSettings(s)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	rctx, cancel := c.ix.requestCtx(ctx)
	cur, err := c.index().GetSettingsWithContext(rctx)
	cancel()
	if err != nil {
		return c.ix.classify(op, err)
	}
	sorted := func(a []string) []string {
		a = slices.Clone(a)
		slices.Sort(a)
		return slices.Compact(a)
	}
	var tasks []*meilisearch.TaskInfo
	update := func(what string, send func(context.Context) (*meilisearch.TaskInfo, error)) error {
		rctx, cancel := c.ix.requestCtx(ctx)
		defer cancel()
		info, err := send(rctx)
		if err != nil {
			return c.ix.classify(op+": "+what, err)
		}
		tasks = append(tasks, info)
		return nil
	}
	if !slices.Equal(sorted(cur.FilterableAttributes), s.Filterable) {
		attrs := make([]interface{}, len(s.Filterable))
		for i, a := range s.Filterable {
			attrs[i] = a
		}
		if err := update("filterable attributes", func(ctx context.Context) (*meilisearch.TaskInfo, error) {
			return c.index().UpdateFilterableAttributesWithContext(ctx, &attrs)
		}); err != nil {
			return err
		}
	}
	if !slices.Equal(sorted(cur.SortableAttributes), s.Sortable) {
		if err := update("sortable attributes", func(ctx context.Context) (*meilisearch.TaskInfo, error) {
			return c.index().UpdateSortableAttributesWithContext(ctx, &s.Sortable)
		}); err != nil {
			return err
		}
	}
	if cur.Pagination == nil || cur.Pagination.MaxTotalHits != meiliMaxTotalHits {
		if err := update("pagination", func(ctx context.Context) (*meilisearch.TaskInfo, error) {
			return c.index().UpdatePaginationWithContext(ctx, &meilisearch.Pagination{MaxTotalHits: meiliMaxTotalHits})
		}); err != nil {
			return err
		}
	}
	if cur.Faceting == nil || cur.Faceting.MaxValuesPerFacet != meiliMaxValuesPerFacet {
		if err := update("faceting", func(ctx context.Context) (*meilisearch.TaskInfo, error) {
			return c.index().UpdateFacetingWithContext(ctx, &meilisearch.Faceting{MaxValuesPerFacet: meiliMaxValuesPerFacet})
		}); err != nil {
			return err
		}
	}
	if cur.TypoTolerance == nil || cur.TypoTolerance.Enabled {
		// Words match exactly (and the last as a prefix), as on the embedded backend.
		if err := update("typo tolerance", func(ctx context.Context) (*meilisearch.TaskInfo, error) {
			return c.index().UpdateTypoToleranceWithContext(ctx, &meilisearch.TypoTolerance{Enabled: false})
		}); err != nil {
			return err
		}
	}
	if cur.ProximityPrecision != meilisearch.ByAttribute {
		// Word pairs are indexed per attribute, not per distance: Meilisearch's proximity
		// rule would only reorder hits, which this package ranks itself (relevance), and the
		// pair-by-distance database was the largest cost of ingesting chunks (38% of a
		// batch's time, and nine times the documents' own size).
		if err := update("proximity precision", func(ctx context.Context) (*meilisearch.TaskInfo, error) {
			return c.index().UpdateProximityPrecisionWithContext(ctx, meilisearch.ByAttribute)
		}); err != nil {
			return err
		}
	}
	if cur.FacetSearch {
		// Nothing calls the facet-search endpoint; its databases cost indexing time.
		if err := update("facet search", func(ctx context.Context) (*meilisearch.TaskInfo, error) {
			return c.index().UpdateFacetSearchWithContext(ctx, false)
		}); err != nil {
			return err
		}
	}
	if !slices.Equal(cur.RankingRules, meiliRankingRules) {
		rules := slices.Clone(meiliRankingRules)
		if err := update("ranking rules", func(ctx context.Context) (*meilisearch.TaskInfo, error) {
			return c.index().UpdateRankingRulesWithContext(ctx, &rules)
		}); err != nil {
			return err
		}
	}
	for _, t := range tasks {
		if err := c.ix.waitTask(ctx, op, t); err != nil {
			return err
		}
	}
	return nil
}

// Upsert validates every document, sends them in batches (by count and bytes), then waits
// for every task and reports the first that failed.
func (c *meiliCollection) Upsert(ctx context.Context, docs []json.RawMessage) error {
	parsed, err := parseDocs(docs, nil)
	if err != nil {
		return fmt.Errorf("upsert into %s: %w", c.uid, err)
	}
	stored := make([]json.RawMessage, len(parsed))
	for i, d := range parsed {
		stored[i] = d.raw // display form: Meilisearch refuses lone surrogates
	}
	return c.addDocuments(ctx, stored)
}

// addDocuments is Upsert without the validation.
func (c *meiliCollection) addDocuments(ctx context.Context, docs []json.RawMessage) error {
	op := "upsert into " + c.uid
	var tasks []*meilisearch.TaskInfo
	send := func(batch []byte) error {
		rctx, cancel := c.ix.requestCtx(ctx)
		defer cancel()
		// A []byte body is sent as is, no re-encoding.
		info, err := c.index().AddDocumentsWithContext(rctx, batch, nil)
		if err != nil {
			return c.ix.classify(op, err)
		}
		tasks = append(tasks, info)
		return nil
	}
	var buf bytes.Buffer
	n := 0
	for _, d := range docs {
		if n > 0 && (n == meiliBatchDocs || buf.Len()+len(d)+2 > meiliBatchBytes) {
			buf.WriteByte(']')
			if err := send(buf.Bytes()); err != nil {
				return err
			}
			buf.Reset()
			n = 0
		}
		if n == 0 {
			buf.WriteByte('[')
		} else {
			buf.WriteByte(',')
		}
		buf.Write(d)
		n++
	}
	if n > 0 {
		buf.WriteByte(']')
		if err := send(buf.Bytes()); err != nil {
			return err
		}
	}
	for _, t := range tasks {
		if err := c.ix.waitTask(ctx, op, t); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes documents by id; ids that cannot be stored are skipped.
func (c *meiliCollection) Delete(ctx context.Context, ids []string) error {
	op := "delete from " + c.uid
	valid := make([]string, 0, len(ids))
	for _, id := range ids {
		if ValidateID(id) {
			valid = append(valid, id)
		}
	}
	var tasks []*meilisearch.TaskInfo
	for chunk := range slices.Chunk(valid, meiliBatchDocs) {
		rctx, cancel := c.ix.requestCtx(ctx)
		info, err := c.index().DeleteDocumentsWithContext(rctx, chunk, nil)
		cancel()
		if err != nil {
			return c.ix.classify(op, err)
		}
		tasks = append(tasks, info)
	}
	for _, t := range tasks {
		if err := c.ix.waitTask(ctx, op, t); err != nil {
			return err
		}
	}
	return nil
}

// DeleteByFilter removes the matching documents. Meilisearch reports a bad filter through
// the task (invalid_document_filter), which maps to ErrInvalidFilter.
func (c *meiliCollection) DeleteByFilter(ctx context.Context, filter string) error {
	op := "delete from " + c.uid + " by filter"
	if strings.TrimSpace(filter) == "" {
		return fmt.Errorf("%s: %w: empty filter", op, ErrInvalidFilter)
	}
	rctx, cancel := c.ix.requestCtx(ctx)
	info, err := c.index().DeleteDocumentsByFilterWithContext(rctx, filter, nil)
	cancel()
	if err != nil {
		return c.ix.classify(op, err)
	}
	return c.ix.waitTask(ctx, op, info)
}

// Search runs a search with matchingStrategy "all" (every word must match, as on the
// embedded backend). One multi-search request asks for the page (offset and limit) and for the
// exact total (page mode with no hits: Meilisearch counts exactly only there).
func (c *meiliCollection) Search(ctx context.Context, q Query) (Result, error) {
	op := "search " + c.uid
	limit, offset := pageBounds(q)
	base := c.searchBody(q.Q, q.Filter, q.Sort)
	page := maps.Clone(base)
	page["offset"], page["limit"] = offset, limit
	count := maps.Clone(base)
	count["page"], count["hitsPerPage"], count["attributesToRetrieve"] = 1, 0, []string{"id"}
	var out [2]meiliSearchResponse
	if err := c.ix.multiSearch(ctx, []map[string]any{page, count}, out[:]); err != nil {
		return Result{}, c.ix.classify(op, err)
	}
	hits := out[0].Hits
	if hits == nil {
		hits = []json.RawMessage{}
	}
	exactHits(hits)
	return Result{Hits: hits, Total: out[1].TotalHits}, nil
}

// searchBody is the common part of a search request on this index.
func (c *meiliCollection) searchBody(q, filter string, sort []string) map[string]any {
	body := map[string]any{"indexUid": c.uid, "q": q, "matchingStrategy": "all"}
	if strings.TrimSpace(filter) != "" {
		body["filter"] = filter
	}
	if len(sort) > 0 {
		body["sort"] = sort
	}
	return body
}

// meiliSearchResponse is the part of a search answer this package reads.
type meiliSearchResponse struct {
	Hits              []json.RawMessage           `json:"hits"`
	TotalHits         int64                       `json:"totalHits"`
	FacetDistribution map[string]map[string]int64 `json:"facetDistribution"`
}

// Count returns the number of documents.
func (c *meiliCollection) Count(ctx context.Context) (int64, error) {
	rctx, cancel := c.ix.requestCtx(ctx)
	defer cancel()
	st, err := c.index().GetStatsWithContext(rctx, nil)
	if err != nil {
		return 0, c.ix.classify("count "+c.uid, err)
	}
	return st.NumberOfDocuments, nil
}

// IDs pages through GetDocuments, fetching only the id field. (The search endpoint stops at
// MaxTotalHits; the documents endpoint does not.)
func (c *meiliCollection) IDs(ctx context.Context, fn func(id string) error) error {
	const page = 1000
	for offset := int64(0); ; offset += page {
		var res meilisearch.DocumentsResult
		rctx, cancel := c.ix.requestCtx(ctx)
		err := c.index().GetDocumentsWithContext(rctx, &meilisearch.DocumentsQuery{
			Offset: offset, Limit: page, Fields: []string{"id"},
		}, &res)
		cancel()
		if err != nil {
			return c.ix.classify("list "+c.uid+" ids", err)
		}
		for _, hit := range res.Results {
			var id string
			if err := json.Unmarshal(hit["id"], &id); err != nil {
				return fmt.Errorf("list %s ids: document without a string id: %w", c.uid, err)
			}
			if err := fn(id); err != nil {
				return err
			}
		}
		if len(res.Results) < page {
			return nil
		}
	}
}
