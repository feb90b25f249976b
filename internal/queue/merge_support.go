package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
)

// FailedJobOf returns the parked record of one job (HGET <module>:failed id); ok is false when
// the job is not parked. The merger reads it to record a park in the catalog with the
// record's own time, so replaying the same result writes the same bytes.
func (c *Client) FailedJobOf(ctx context.Context, module, id string) (job FailedJob, ok bool, err error) {
	raw, err := c.rdb.HGet(ctx, protocol.FailedKey(module), id).Result()
	if errors.Is(err, redis.Nil) {
		return FailedJob{}, false, nil
	}
	if err != nil {
		return FailedJob{}, false, fmt.Errorf("parked job %s/%s: %w", module, id, err)
	}
	var r failedRecord
	if err := decodeFailed(raw, &r); err != nil {
		return FailedJob{}, false, fmt.Errorf("parked job %s/%s: %w", module, id, err)
	}
	return r.job(), true, nil
}
