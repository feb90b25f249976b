package app

import (
	"github.com/redis/go-redis/v9"

	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/protocol"
)

func searchQuery(q, filter string) search.Query {
	return search.Query{Q: q, Filter: filter, Limit: 100}
}

func protocolTimeout(queue, item string) string { return protocol.TimeoutMember(queue, item) }

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }
