package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/homeindex/homeindex/internal/search"
)

// contentHits adds to res the files whose module content (the chunk index) matches q.Q but
// whose own fields did not, after the files hits on the first page, within q.Limit; q.Filter applies to them
// too. A word found only inside a PDF or a DOCX thus finds its file.
func contentHits(ctx context.Context, idx search.Index, q search.Query, res search.Result) (search.Result, error) {
	if strings.TrimSpace(q.Q) == "" || q.Offset > 0 || len(res.Hits) >= q.Limit {
		return res, nil
	}
	seen := map[string]bool{}
	for _, h := range res.Hits {
		var d struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(h, &d) == nil {
			seen[d.ID] = true
		}
	}
	chunks, err := idx.Chunks().Search(ctx, search.Query{Q: q.Q, Limit: search.MaxTotalHits})
	if err != nil {
		return res, fmt.Errorf("search module content: %w", err)
	}
	var ids []string
	for _, h := range chunks.Hits {
		var c struct {
			FileID string `json:"file_id"`
		}
		if json.Unmarshal(h, &c) == nil && c.FileID != "" && !seen[c.FileID] {
			seen[c.FileID] = true
			ids = append(ids, fmt.Sprintf("%q", c.FileID))
		}
	}
	if len(ids) == 0 {
		return res, nil
	}
	filter := "id IN [" + strings.Join(ids, ", ") + "]"
	if q.Filter != "" {
		filter = "(" + q.Filter + ") AND " + filter
	}
	more, err := idx.Files().Search(ctx, search.Query{Filter: filter, Sort: q.Sort, Limit: q.Limit - len(res.Hits)})
	if err != nil {
		return res, fmt.Errorf("search module content: %w", err)
	}
	res.Hits = append(res.Hits, more.Hits...)
	res.Total += more.Total
	return res, nil
}
