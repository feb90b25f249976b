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
//     the union of both sets); ranked by relevance, every match's id and date instead of
//     the page, which is then ranked here as the embedded backend ranks it (relevance);
//  3. with words and snippets: each hit's first matching chunks (and the ranked page).
func (ix *meiliIndex) searchFiles(ctx context.Context, q FileQuery, sortClauses []string, _ bool) (FileResult, error) {
	op := "search files"
	files, chunks := ix.files, ix.chunks
	filter := q.filter()
	words, _ := queryWords(q.Q)
	own, inChunks := map[string]bool{}, map[string]int64{}
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
			ids[id], own[id] = true, true
		}
		for id, n := range sets[1].FacetDistribution["file_id"] {
			ids[id], inChunks[id] = true, n
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
	ranked := len(words) > 0 && isRelevance(q.Sort)
	base := files.searchBody("", filter, append(slices.Clone(sortClauses), "id:asc"))
	page := maps.Clone(base)
	page["offset"], page["limit"] = offset, limit
	if ranked {
		page["offset"], page["limit"] = 0, len(own)+len(inChunks)
		page["attributesToRetrieve"] = []string{"id", FieldDate}
		delete(page, "sort") // ranked here
	}
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
	if ranked {
		ids = rankMeiliPage(out[0].Hits, own, inChunks, offset, limit)
	} else {
		for _, h := range out[0].Hits {
			res.Hits = append(res.Hits, FileHit{Doc: h})
			ids = append(ids, hitID(h))
		}
	}
	if len(ids) == 0 || !ranked && (len(words) == 0 || q.Snippets == 0) {
		return res, nil
	}
	var queries []map[string]any
	if ranked {
		b := files.searchBody("", `id IN ["`+strings.Join(ids, `", "`)+`"]`, nil)
		b["limit"] = len(ids)
		queries = append(queries, b)
	}
	if q.Snippets > 0 {
		for _, id := range ids {
			b := chunks.searchBody(q.Q, fmt.Sprintf("file_id = %q", id), []string{"index:asc", "id:asc"})
			b["limit"] = q.Snippets
			queries = append(queries, b)
		}
	}
	answers := make([]meiliSearchResponse, len(queries))
	if err := ix.multiSearch(ctx, queries, answers); err != nil {
		return FileResult{}, ix.classify(op+": page", err)
	}
	if ranked {
		docs := map[string]json.RawMessage{}
		for _, h := range answers[0].Hits {
			docs[hitID(h)] = h
		}
		for _, id := range ids {
			res.Hits = append(res.Hits, FileHit{Doc: docs[id]})
		}
		answers = answers[1:]
	}
	qw, prefix := queryWords(q.Q)
	for i := range answers {
		for _, c := range answers[i].Hits {
			if s, ok := snippetOf(c, qw, prefix); ok {
				res.Hits[i].Snippets = append(res.Hits[i].Snippets, s)
			}
		}
	}
	return res, nil
}

func hitID(h json.RawMessage) string {
	var d struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(h, &d)
	return d.ID
}

// rankMeiliPage ranks every match (id and date) by relevance and returns the page's ids.
func rankMeiliPage(hits []json.RawMessage, own map[string]bool, inChunks map[string]int64, offset, limit int) []string {
	all := make([]relevance, 0, len(hits))
	for _, h := range hits {
		var d struct {
			ID   string   `json:"id"`
			Date *float64 `json:"date"`
		}
		_ = json.Unmarshal(h, &d)
		r := relevance{own: own[d.ID], chunks: int(inChunks[d.ID]), id: d.ID}
		if d.Date != nil {
			r.dated, r.date = true, *d.Date
		}
		all = append(all, r)
	}
	slices.SortFunc(all, relevance.compare)
	var ids []string
	for _, r := range all[min(offset, len(all)):min(offset+limit, len(all))] {
		ids = append(ids, r.id)
	}
	return ids
}

// meiliFacetValue writes a Meilisearch facet value as facetValue does: numbers are already
// decimal text ("2019"), strings are lower-cased.
func meiliFacetValue(v string) string {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return normalizeString(v)
}
