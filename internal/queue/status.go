package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// QuarantineDroppedKey is a STRING counter of quarantine records dropped by the bound (ours).
const QuarantineDroppedKey = "homeindex:quarantine:dropped"

// waitingScan bounds how many waiting items OldestWaiting reads per list: the lists are
// window-bounded, so this only guards against foreign fills.
const waitingScan = 1000

// OldestWaiting returns when the oldest job waiting in <module>:check or <module>:run was
// first dispatched (its protocol.FieldSince), or ok false when none waits. It reads at most
// 1000 items per list (the lists are window-bounded).
func (c *Client) OldestWaiting(ctx context.Context, module string) (since time.Time, ok bool, err error) {
	pipe := c.rdb.Pipeline()
	check := pipe.LRange(ctx, protocol.CheckKey(module), 0, waitingScan-1)
	run := pipe.LRange(ctx, protocol.RunKey(module), 0, waitingScan-1)
	if _, err := pipe.Exec(ctx); err != nil {
		return time.Time{}, false, fmt.Errorf("oldest waiting %s: %w", module, err)
	}
	var oldest int64
	for _, item := range append(check.Val(), run.Val()...) {
		info, err := protocol.ParseItem(item)
		if err != nil || !info.HasJob || info.Job.Since <= 0 {
			continue
		}
		if oldest == 0 || info.Job.Since < oldest {
			oldest = info.Job.Since
		}
	}
	if oldest == 0 {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(oldest), true, nil
}

// dropFailedScript deletes parked records of a module whose item still names the dispatch
// token given (a job parked again under a new token meanwhile stays).
//
// KEYS[1] -> <m>:failed  HASH
// ARGV[2k-1], ARGV[2k] -> document id, token ("" = whatever the record holds) (k = 1..n)
//
// Returns: how many records were deleted.
var dropFailedScript = newScript(`
local n = 0
for i = 1, #ARGV, 2 do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v and (ARGV[i + 1] == '' or string.find(v, ARGV[i + 1], 1, true)) then
    n = n + redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return n
`)

// DropFailed deletes parked records of a module: ids maps a document id to the dispatch token
// its record must still carry ("" for any). Parked records are not in flight, so nothing
// running is touched. Returns how many were deleted.
func (c *Client) DropFailed(ctx context.Context, module string, ids map[string]string) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var total int64
	args := make([]any, 0, 2*pushBatch)
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		n, err := dropFailedScript.Run(ctx, c.rdb, []string{protocol.FailedKey(module)}, args...).Int64()
		if err != nil {
			return fmt.Errorf("drop parked %s: %w", module, err)
		}
		total += n
		args = args[:0]
		return nil
	}
	for id, tok := range ids {
		args = append(args, id, tok)
		if len(args) >= 2*pushBatch {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	return total, flush()
}

// FailedIDs lists the document ids of a module's parked records (HSCAN).
func (c *Client) FailedIDs(ctx context.Context, module string) ([]string, error) {
	var ids []string
	err := c.scanFailed(ctx, module, func(id, _ string) bool { ids = append(ids, id); return true })
	return ids, err
}

// trimQuarantineScript keeps the newest ARGV[1] records of modules:quarantine and counts the
// rest as dropped. It uses only commands the daemon's least-privilege ACL user already has
// (README, Security): LRANGE + LREM from the head instead of LTRIM, GET + SET instead of INCRBY.
//
// KEYS[1] -> modules:quarantine              LIST  oldest at the head
// KEYS[2] -> homeindex:quarantine:dropped    STRING counter
// ARGV[1] -> how many records to keep; ARGV[2] -> most records to drop in one call
//
// Returns: how many records were dropped now.
var trimQuarantineScript = newScript(`
local n = redis.call('LLEN', KEYS[1])
local drop = math.min(n - tonumber(ARGV[1]), tonumber(ARGV[2]))
if drop <= 0 then return 0 end
local old = redis.call('LRANGE', KEYS[1], 0, drop - 1)
for i = 1, #old do
  redis.call('LREM', KEYS[1], 1, old[i])
end
redis.call('SET', KEYS[2], tostring((tonumber(redis.call('GET', KEYS[2])) or 0) + #old))
return #old
`)

// trimBatch bounds the records one trimQuarantineScript call drops.
const trimBatch = 1000

// TrimQuarantine drops the oldest quarantine records beyond keep, counting them.
func (c *Client) TrimQuarantine(ctx context.Context, keep int) (int64, error) {
	var total int64
	for {
		n, err := trimQuarantineScript.Run(ctx, c.rdb, []string{protocol.QuarantineKey, QuarantineDroppedKey}, max(keep, 0), trimBatch).Int64()
		if err != nil {
			return total, fmt.Errorf("trim quarantine: %w", err)
		}
		total += n
		if n < trimBatch {
			return total, nil
		}
	}
}

// QuarantineCounts returns how many quarantine records are kept and how many were dropped by
// the bound.
func (c *Client) QuarantineCounts(ctx context.Context) (kept, dropped int64, err error) {
	pipe := c.rdb.Pipeline()
	l := pipe.LLen(ctx, protocol.QuarantineKey)
	d := pipe.Get(ctx, QuarantineDroppedKey)
	_, _ = pipe.Exec(ctx)
	if err := l.Err(); err != nil {
		return 0, 0, fmt.Errorf("quarantine counts: %w", err)
	}
	dropped, _ = d.Int64() // unset: 0
	return l.Val(), dropped, nil
}

// QuarantinedNewest lists up to limit quarantine records, newest first.
func (c *Client) QuarantinedNewest(ctx context.Context, limit int) ([]QuarantineRecord, error) {
	raws, err := c.rdb.LRange(ctx, protocol.QuarantineKey, -int64(max(limit, 1)), -1).Result()
	if err != nil {
		return nil, fmt.Errorf("list quarantine: %w", err)
	}
	out := make([]QuarantineRecord, 0, len(raws))
	for i := len(raws) - 1; i >= 0; i-- {
		out = append(out, decodeQuarantine(raws[i]))
	}
	return out, nil
}

func decodeQuarantine(raw string) QuarantineRecord {
	var q QuarantineRecord
	if err := json.Unmarshal([]byte(raw), &q); err != nil {
		q = QuarantineRecord{Reason: "unreadable quarantine record", Payload: raw}
	}
	return q
}

// QuarantineModule is the module a quarantined payload names, or "" when it names none.
func QuarantineModule(r QuarantineRecord) string {
	var m struct {
		Module string `json:"module"`
	}
	if json.Unmarshal([]byte(r.Payload), &m) != nil || !protocol.ValidModuleName(m.Module) {
		return ""
	}
	return m.Module
}

// clearQuarantineScript empties modules:quarantine.
//
// KEYS[1] -> modules:quarantine  LIST
//
// Returns: how many records were removed.
var clearQuarantineScript = newScript(`
local n = redis.call('LLEN', KEYS[1])
redis.call('DEL', KEYS[1])
return n
`)

// ClearQuarantine removes quarantine records: all of them when module is "", else those whose
// payload names module. Returns how many were removed.
func (c *Client) ClearQuarantine(ctx context.Context, module string) (int64, error) {
	if module == "" {
		n, err := clearQuarantineScript.Run(ctx, c.rdb, []string{protocol.QuarantineKey}).Int64()
		if err != nil {
			return 0, fmt.Errorf("clear quarantine: %w", err)
		}
		return n, nil
	}
	raws, err := c.rdb.LRange(ctx, protocol.QuarantineKey, 0, -1).Result()
	if err != nil {
		return 0, fmt.Errorf("clear quarantine %s: %w", module, err)
	}
	var n int64
	for _, raw := range raws {
		if QuarantineModule(decodeQuarantine(raw)) != module {
			continue
		}
		k, err := c.rdb.LRem(ctx, protocol.QuarantineKey, 1, raw).Result()
		if err != nil {
			return n, fmt.Errorf("clear quarantine %s: %w", module, err)
		}
		n += k
	}
	return n, nil
}

// Errors returns how many Redis commands or dials failed for want of a connection since the
// client was made.
func (c *Client) Errors() int64 { return c.connErrors.Load() }
