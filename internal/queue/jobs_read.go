package queue

import (
	"context"
	"fmt"

	"github.com/homeindex/homeindex/protocol"
)

// JobTokens returns the dispatch token of each id's job in flight (HMGET of the module's jobs
// hash: one round trip); ids without a job, or whose item has no job fields, are absent.
func (c *Client) JobTokens(ctx context.Context, module string, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	vals, err := c.rdb.HMGet(ctx, protocol.JobsKey(module), ids...).Result()
	if err != nil {
		return nil, fmt.Errorf("jobs %s: %w", module, err)
	}
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue
		}
		if info, err := protocol.ParseItem(s); err == nil && info.HasJob {
			out[ids[i]] = info.Job.Token
		}
	}
	return out, nil
}
