package sdk

import (
	"time"

	"github.com/homeindex/homeindex/redisconn"

	"github.com/redis/go-redis/v9"
)

// newRedisClient opens the worker's connection pool. Blocking waits use their own connections
// (one per watched list), so the pool holds a few more than the worker's one-at-a-time work.
func newRedisClient(c Config) (*redis.Client, error) {
	ro, err := c.Redis.Options(redisconnPool)
	if err != nil {
		return nil, err
	}
	return redis.NewClient(ro), nil
}

// redisconnPool is the worker's pool: small, with a read timeout above the blocking waits'.
var redisconnPool = redisconn.Pool{Size: 8, DialTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second}
