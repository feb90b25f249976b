package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
)

// sweepPage is the LRANGE/ZRANGE/HSCAN page size of a sweep; sweepMax bounds what one sweep
// reads from each list (they are window-bounded, so this is a guard, not a limit in practice).
const (
	sweepPage = 256
	sweepMax  = 16384
)

// SweepResult counts what one orphan sweep did.
type SweepResult struct {
	Requeued int // next attempts put at the head of their queue
	Retrying int // next attempts waiting for their backoff
	Suspects int // items that look orphaned or lost but whose grace period has not ended
	Parked   []Parked
	Dropped  []Dropped
}

// reapOrphanScript handles an item found in a processing list with no timeouts member: a worker
// died between taking it and setting its deadline. It becomes a suspect first; if it is still
// there without a deadline after the grace period, its attempt ends as failed.
//
// KEYS[1] -> <m>:<phase>:processing  LIST
// KEYS[2] -> timeouts                ZSET
// KEYS[3] -> homeindex:<m>:suspects  ZSET  "p|<item>" -> first seen (epoch ms)
// KEYS[4] -> <m>:<phase>             LIST  where the next attempt goes
// KEYS[5] -> homeindex:<m>:retry     ZSET
// KEYS[6] -> homeindex:<m>:jobs      HASH
// KEYS[7] -> <m>:failed              HASH
// ARGV[1] -> item; ARGV[2] -> its timeouts member; ARGV[3] -> grace ms
// ARGV[4] -> document id, or "" to drop the item without a retry (not ours, another uid)
// ARGV[5] -> next attempt's item; ARGV[6] -> phase; ARGV[7] -> attempt; ARGV[8] -> max attempts
// ARGV[9] -> backoff ms; ARGV[10] -> reason; ARGV[11] -> module
//
// Returns: 0 the item left the list; -1 it has a deadline now; -2 suspect, grace not over;
// -3 removed without a retry (ARGV[4] empty, or not the job's current attempt); else
// retry_or_park's 1, 2 or 3.
var reapOrphanScript = newScript(luaNow + luaRetryOrPark + `
local sk = 'p|' .. ARGV[1]
if not redis.call('LPOS', KEYS[1], ARGV[1]) then
  redis.call('ZREM', KEYS[3], sk)
  return 0
end
if redis.call('ZSCORE', KEYS[2], ARGV[2]) then
  redis.call('ZREM', KEYS[3], sk)
  return -1
end
local first = redis.call('ZSCORE', KEYS[3], sk)
if not first then
  redis.call('ZADD', KEYS[3], now_ms, sk)
  return -2
end
if now_ms - tonumber(first) < tonumber(ARGV[3]) then return -2 end
redis.call('ZREM', KEYS[3], sk)
redis.call('LREM', KEYS[1], 1, ARGV[1])
if ARGV[4] == '' or redis.call('HGET', KEYS[6], ARGV[4]) ~= ARGV[1] then return -3 end
return retry_or_park(KEYS[4], KEYS[5], KEYS[6], KEYS[7], ARGV[4], ARGV[1], ARGV[5], ARGV[6],
  ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11])
`)

// reapLostScript handles a job whose item is in no list and not in the retry set: a worker died
// holding it outside Redis (upstream workers LPOP/BLPOP before recording it), or Redis lost a
// write. It becomes a suspect first; if it is still nowhere after the grace period while no
// result awaits merge, its attempt ends as failed and the next one goes to <m>:check.
//
// KEYS[1] -> homeindex:<m>:jobs       HASH
// KEYS[2] -> <m>:check                LIST
// KEYS[3] -> <m>:run                  LIST
// KEYS[4] -> <m>:check:processing     LIST
// KEYS[5] -> <m>:run:processing       LIST
// KEYS[6] -> homeindex:<m>:retry      ZSET
// KEYS[7] -> <m>:failed               HASH
// KEYS[8] -> modules:done             LIST
// KEYS[9] -> modules:done:processing  LIST
// KEYS[10] -> homeindex:<m>:suspects  ZSET  "l|<item>" -> first seen (epoch ms)
// ARGV[1] -> document id; ARGV[2] -> its jobs entry (item); ARGV[3] -> grace ms
// ARGV[4] -> next attempt's item; ARGV[5] -> attempt; ARGV[6] -> max attempts
// ARGV[7] -> backoff ms; ARGV[8] -> reason; ARGV[9] -> module
//
// Returns: 0 not lost (entry changed, or the item is in a list or the retry set); -2 suspect,
// grace not over; -4 grace over but results await merge (one may be this job's); else
// retry_or_park's 1, 2 or 3.
var reapLostScript = newScript(luaNow + luaRetryOrPark + `
local item = ARGV[2]
local sk = 'l|' .. item
local found = redis.call('HGET', KEYS[1], ARGV[1]) ~= item
for i = 2, 5 do
  found = found or redis.call('LPOS', KEYS[i], item)
end
found = found or redis.call('ZSCORE', KEYS[6], 'check|' .. item) or redis.call('ZSCORE', KEYS[6], 'run|' .. item)
if found then
  redis.call('ZREM', KEYS[10], sk)
  return 0
end
local first = redis.call('ZSCORE', KEYS[10], sk)
if not first then
  redis.call('ZADD', KEYS[10], now_ms, sk)
  return -2
end
if now_ms - tonumber(first) < tonumber(ARGV[3]) then return -2 end
if redis.call('LLEN', KEYS[8]) > 0 or redis.call('LLEN', KEYS[9]) > 0 then return -4 end
redis.call('ZREM', KEYS[10], sk)
return retry_or_park(KEYS[2], KEYS[6], KEYS[1], KEYS[7], ARGV[1], item, ARGV[4], 'check',
  ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
`)

// SweepOrphans finds a module's jobs that no deadline protects and ends their attempt as failed
// once they stayed so for grace (use a few times the module TIMEOUT):
//   - items in a processing list without a timeouts member (the worker died between taking
//     the item and ZADD);
//   - jobs whose item is in no list and not in the retry set (the worker died holding it).
//
// Items not ours or built for another uid are dropped. Cost: O(window) reads, one script per
// suspect.
func (c *Client) SweepOrphans(ctx context.Context, m Module, grace time.Duration, p RetryPolicy) (SweepResult, error) {
	var res SweepResult
	if !protocol.ValidModuleName(m.Name) {
		return res, fmt.Errorf("sweep: invalid module name %q", m.Name)
	}
	p = p.withDefaults()
	seen := map[string]bool{}    // every item in a list or the retry set
	suspect := map[string]bool{} // suspects members this sweep looked at
	var calls []scriptCall
	var meta []reapCall
	for _, ph := range []protocol.Phase{protocol.PhaseCheck, protocol.PhaseRun} {
		queue := protocol.QueueKey(m.Name, ph)
		plist := protocol.ProcessingKey(queue)
		for _, key := range []string{queue, plist} {
			items, err := c.lrangePages(ctx, key)
			if err != nil {
				return res, err
			}
			for _, it := range items {
				seen[it] = true
			}
			if key != plist || len(items) == 0 {
				continue
			}
			orphans, err := c.withoutDeadline(ctx, queue, items)
			if err != nil {
				return res, err
			}
			for _, it := range orphans {
				suspect["p|"+it] = true
				sc, rc := c.planOrphan(m, ph, it, grace, p)
				calls, meta = append(calls, sc), append(meta, rc)
			}
		}
	}
	for start := int64(0); start < sweepMax; start += sweepPage {
		page, err := c.rdb.ZRange(ctx, protocol.RetryKey(m.Name), start, start+sweepPage-1).Result()
		if err != nil {
			return res, fmt.Errorf("sweep %s: %w", m.Name, err)
		}
		for _, mem := range page {
			if _, it, ok := cutPhase(mem); ok {
				seen[it] = true
			}
		}
		if len(page) < sweepPage {
			break
		}
	}
	var cursor uint64
	for {
		kv, next, err := c.rdb.HScan(ctx, protocol.JobsKey(m.Name), cursor, "", sweepPage).Result()
		if err != nil {
			return res, fmt.Errorf("sweep %s: %w", m.Name, err)
		}
		for i := 0; i+1 < len(kv); i += 2 {
			id, item := kv[i], kv[i+1]
			if seen[item] || suspect["l|"+item] {
				continue
			}
			suspect["l|"+item] = true
			sc, rc, ok := c.planLost(m, id, item, grace, p)
			if ok {
				calls, meta = append(calls, sc), append(meta, rc)
			}
		}
		if next == 0 {
			break
		}
		cursor = next
	}
	cmds, err := c.runScripts(ctx, calls)
	if err != nil {
		return res, fmt.Errorf("sweep %s: %w", m.Name, err)
	}
	for i, cmd := range cmds {
		n, err := cmd.Int64()
		if err != nil {
			return res, fmt.Errorf("sweep %s: %w", m.Name, err)
		}
		rc := meta[i]
		switch n {
		case sweepNotOrphan, sweepProtected:
		case sweepSuspect, sweepAwaitsMerge:
			res.Suspects++
		case sweepDropped:
			reason := rc.reason
			if !rc.drop {
				reason = "not the job's current attempt"
			}
			res.Dropped = append(res.Dropped, Dropped{Module: m.Name, ID: rc.id, Reason: reason})
		case int64(OutcomeRequeued):
			res.Requeued++
		case int64(OutcomeRetrying):
			res.Retrying++
		case int64(OutcomeParked):
			res.Parked = append(res.Parked, Parked{Module: m.Name, ID: rc.id, Token: rc.token, Attempts: rc.attempt, Reason: rc.reason})
		default:
			return res, unexpected("sweep", n)
		}
	}
	return res, c.pruneSuspects(ctx, m.Name, suspect)
}

// lrangePages reads a window-bounded list in pages.
func (c *Client) lrangePages(ctx context.Context, key string) ([]string, error) {
	var out []string
	for start := int64(0); start < sweepMax; start += sweepPage {
		page, err := c.rdb.LRange(ctx, key, start, start+sweepPage-1).Result()
		if err != nil {
			return out, fmt.Errorf("sweep %s: %w", key, err)
		}
		out = append(out, page...)
		if len(page) < sweepPage {
			break
		}
	}
	return out, nil
}

// withoutDeadline returns the items of queue's processing list that have no timeouts member.
func (c *Client) withoutDeadline(ctx context.Context, queue string, items []string) ([]string, error) {
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.FloatCmd, len(items))
	for i, it := range items {
		cmds[i] = pipe.ZScore(ctx, protocol.TimeoutsKey, protocol.TimeoutMember(queue, it))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("sweep %s: %w", queue, err)
	}
	var out []string
	for i, cmd := range cmds {
		if errors.Is(cmd.Err(), redis.Nil) {
			out = append(out, items[i])
		}
	}
	return out, nil
}

func (c *Client) planOrphan(m Module, ph protocol.Phase, item string, grace time.Duration, p RetryPolicy) (scriptCall, reapCall) {
	queue := protocol.QueueKey(m.Name, ph)
	rc := reapCall{module: m.Name}
	id, next, delay := "", "", int64(0)
	info, err := protocol.ParseItem(item)
	switch {
	case err != nil:
		rc.drop, rc.reason = true, "unreadable item: "+err.Error()
	case !info.HasJob || info.UID != m.UID:
		rc.id = info.ID
		_, rc.reason = staleReason(item, m.UID)
		rc.drop = true
	default:
		rc.id, rc.token, rc.attempt = info.ID, info.Job.Token, info.Job.Attempt
		rc.reason = fmt.Sprintf("orphaned in %s: taken by a worker that never set its deadline (attempt %d)", ph, info.Job.Attempt)
		if next, delay, err = nextAttempt(item, info, p); err != nil {
			rc.drop, rc.reason = true, "cannot rewrite item: "+err.Error()
		} else {
			id = info.ID
		}
	}
	return scriptCall{reapOrphanScript,
		[]string{protocol.ProcessingKey(queue), protocol.TimeoutsKey, protocol.SuspectsKey(m.Name), queue,
			protocol.RetryKey(m.Name), protocol.JobsKey(m.Name), protocol.FailedKey(m.Name)},
		[]any{item, protocol.TimeoutMember(queue, item), grace.Milliseconds(), id, next, string(ph),
			info.Job.Attempt, p.MaxAttempts, delay, rc.reason, m.Name},
	}, rc
}

func (c *Client) planLost(m Module, id, item string, grace time.Duration, p RetryPolicy) (scriptCall, reapCall, bool) {
	info, err := protocol.ParseItem(item)
	if err != nil || !info.HasJob {
		c.log.Warn().Str("module", m.Name).Str("id", id).Msg("jobs entry holds an item without job fields; ignored")
		return scriptCall{}, reapCall{}, false
	}
	next, delay, err := nextAttempt(item, info, p)
	if err != nil {
		c.log.Warn().Err(err).Str("module", m.Name).Str("id", id).Msg("cannot rewrite lost item; ignored")
		return scriptCall{}, reapCall{}, false
	}
	rc := reapCall{module: m.Name, id: id, token: info.Job.Token, attempt: info.Job.Attempt,
		reason: fmt.Sprintf("lost: in no queue for the grace period (attempt %d)", info.Job.Attempt)}
	return scriptCall{reapLostScript,
		[]string{protocol.JobsKey(m.Name), protocol.CheckKey(m.Name), protocol.RunKey(m.Name),
			protocol.CheckProcessingKey(m.Name), protocol.RunProcessingKey(m.Name), protocol.RetryKey(m.Name),
			protocol.FailedKey(m.Name), protocol.DoneKey, protocol.DoneProcessingKey, protocol.SuspectsKey(m.Name)},
		[]any{id, item, grace.Milliseconds(), next, info.Job.Attempt, p.MaxAttempts, delay, rc.reason, m.Name},
	}, rc, true
}

// pruneSuspects forgets suspects this sweep did not see again (they moved on). Removing one by
// mistake only restarts its grace period.
func (c *Client) pruneSuspects(ctx context.Context, module string, keep map[string]bool) error {
	key := protocol.SuspectsKey(module)
	members, err := c.rdb.ZRange(ctx, key, 0, sweepMax-1).Result()
	if err != nil {
		return fmt.Errorf("sweep %s: %w", module, err)
	}
	var drop []any
	for _, mem := range members {
		if !keep[mem] {
			drop = append(drop, mem)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	if err := c.rdb.ZRem(ctx, key, drop...).Err(); err != nil {
		return fmt.Errorf("sweep %s: %w", module, err)
	}
	return nil
}
