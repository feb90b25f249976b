package catalog

import (
	"context"
	"encoding/json"
	"fmt"
)

// JobByToken is what JobsByToken knows of one token.
type JobByToken struct {
	DocID string // the document whose job carries the token
	Live  bool   // the document is live: a result would be merged now
}

// JobsByToken looks up module's jobs carrying tokens (tokens are random and unique) in one
// query: the merger asks once per batch of results which job each answers and whether it is
// current, so a result whose echoed id was altered still finds its job and stale results never
// touch the metadata directory. Tokens of no job are absent from the map.
func (c *Catalog) JobsByToken(ctx context.Context, module string, tokens []string) (map[string]JobByToken, error) {
	list, err := json.Marshal(tokens)
	if err != nil {
		return nil, err
	}
	rows, err := c.r.QueryContext(ctx, `SELECT j.token, j.doc_id, coalesce(d.retired = 0, 0) FROM jobs j
		LEFT JOIN documents d ON d.id = j.doc_id
		WHERE j.module = ? AND j.token IN (SELECT value FROM json_each(?))`, module, string(list))
	if err != nil {
		return nil, fmt.Errorf("catalog: jobs by token: %w", err)
	}
	defer rows.Close()
	out := make(map[string]JobByToken, len(tokens))
	for rows.Next() {
		var token string
		var j JobByToken
		if err := rows.Scan(&token, &j.DocID, &j.Live); err != nil {
			return nil, fmt.Errorf("catalog: jobs by token: %w", err)
		}
		out[token] = j
	}
	return out, rows.Err()
}
