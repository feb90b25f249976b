package search

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// searchFiles runs a FileQuery on Meilisearch, which cannot join two indexes, in at most three
// multi-search requests:
//
//  1. with words: the files whose own fields match (the files index's "id" facet, filters
//     applied) and the files with a matching chunk (the chunks index's "file_id" facet);
//  2. the page and the exact total with facets, over the filters (and, with words, "id IN"
//     the union of both sets);
//  3. with words and snippets: each hit's first matching chunks.
func (ix *meiliIndex) searchFiles(ctx context.Context, q FileQuery, sortClauses []string, _ bool) (FileResult, error) {
	op := "search files"
	files, chunks := ix.files, ix.chunks
	filter := q.filter()
	words, _ := queryWords(q.Q)
	if len(words) > 0 {
		var sets [2]meiliSearchResponse
		fieldQ := files.searchBody(q.Q, filter, nil)
		fieldQ["page"], fieldQ["hitsPerPage"], fieldQ["facets"] = 1, 0, []string{"id"}
		contentQ := chunks.searchBody(q.Q, "", nil)
		contentQ["page"], contentQ["hitsPerPage"], contentQ["facets"] = 1, 0, []string{"file_id"}
		if err := ix.multiSearch(ctx, []map[string]any{fieldQ, contentQ}, sets[:]); err != nil {
			return FileResult{}, ix.classify(op, err)
		}
		ids := map[string]bool{}
		for id := range sets[0].FacetDistribution["id"] {
			ids[id] = true
		}
		for id := range sets[1].FacetDistribution["file_id"] {
			ids[id] = true
		}
		if len(ids) == 0 {
			return FileResult{Facets: map[string][]FacetCount{}}, nil
		}
		list := slices.Sorted(maps.Keys(ids))
		in := `id IN ["` + strings.Join(list, `", "`) + `"]` // ids are [A-Za-z0-9_-]
		if filter != "" {
			filter = "(" + filter + ") AND " + in
		} else {
			filter = in
		}
	}
	limit, offset := pageBounds(Query{Limit: q.Limit, Offset: q.Offset})
	base := files.searchBody("", filter, append(slices.Clone(sortClauses), "id:asc"))
	page := maps.Clone(base)
	page["offset"], page["limit"] = offset, limit
	count := maps.Clone(base)
	delete(count, "sort")
	count["page"], count["hitsPerPage"], count["attributesToRetrieve"] = 1, 0, []string{"id"}
	if len(q.Facets) > 0 {
		count["facets"] = q.Facets
	}
	var out [2]meiliSearchResponse
	if err := ix.multiSearch(ctx, []map[string]any{page, count}, out[:]); err != nil {
		return FileResult{}, ix.classify(op, err)
	}
	res := FileResult{Total: out[1].TotalHits, Facets: map[string][]FacetCount{}}
	for _, f := range q.Facets {
		counts := map[string]int64{}
		for v, n := range out[1].FacetDistribution[f] {
			counts[meiliFacetValue(v)] += n
		}
		res.Facets[f] = facetCounts(counts)
	}
	var ids []string
	for _, h := range out[0].Hits {
		res.Hits = append(res.Hits, FileHit{Doc: h})
		var d struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(h, &d)
		ids = append(ids, d.ID)
	}
	if len(words) == 0 || q.Snippets == 0 || len(ids) == 0 {
		return res, nil
	}
	queries := make([]map[string]any, len(ids))
	for i, id := range ids {
		b := chunks.searchBody(q.Q, fmt.Sprintf("file_id = %q", id), []string{"index:asc", "id:asc"})
		b["limit"] = q.Snippets
		queries[i] = b
	}
	snips := make([]meiliSearchResponse, len(ids))
	if err := ix.multiSearch(ctx, queries, snips); err != nil {
		return FileResult{}, ix.classify(op+": snippets", err)
	}
	qw, prefix := queryWords(q.Q)
	for i := range ids {
		for _, c := range snips[i].Hits {
			if s, ok := snippetOf(c, qw, prefix); ok {
				res.Hits[i].Snippets = append(res.Hits[i].Snippets, s)
			}
		}
	}
	return res, nil
}

// meiliFacetValue writes a Meilisearch facet value as facetValue does: numbers are already
// decimal text ("2019"), strings are lower-cased.
func meiliFacetValue(v string) string {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return normalizeString(v)
}
