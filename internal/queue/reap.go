package queue

import (
	"context"
	"fmt"

	"github.com/homeindex/homeindex/protocol"
)

// Reap limits.
const (
	DefaultReapBatch = 256 // expired members handled per script round
	reapMaxRounds    = 16  // rounds per Reap call, so one pass stays bounded
)

// Module names a configured module and its current uid ("" when it has none).
type Module struct {
	Name string
	UID  string
}

// ReapOptions configures one reaper pass.
type ReapOptions struct {
	Modules []Module // the configured modules; members of other modules are dropped
	Policy  RetryPolicy
	Batch   int // expired members per round; zero means DefaultReapBatch
}

// ReapResult counts what one pass did.
type ReapResult struct {
	Expired  int // expired timeouts members examined
	Requeued int // next attempts put at the head of their queue at once
	Retrying int // next attempts waiting for their backoff in the retry set
	Promoted int // retry-set items whose backoff ended, moved to the head of their queue
	Gone     int // members whose item had left its processing list or that were renewed: removed or left alone
	Parked   []Parked
	Dropped  []Dropped
}

// listExpiredScript lists timeouts members whose deadline passed by the Redis clock.
//
// KEYS[1] -> timeouts   ZSET  member {"q": ..., "d": ...} -> deadline (epoch seconds)
// ARGV[1] -> maximum number of members
//
// Returns: up to ARGV[1] members with score <= now, earliest first. O(log N + returned).
var listExpiredScript = newScript(luaNow + `
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.6f', now_s), 'LIMIT', 0, tonumber(ARGV[1]))
`)

// requeueExpiredScript ends an expired attempt as failed, if it is still expired by the Redis
// clock and its item is still in its processing list (a worker finishing between the scan and
// this script wins: its ZREM/LREM came first, and this script changes nothing).
//
// KEYS[1] -> timeouts                ZSET
// KEYS[2] -> <m>:<phase>:processing  LIST
// KEYS[3] -> <m>:<phase>             LIST  where the next attempt goes
// KEYS[4] -> homeindex:<m>:retry     ZSET
// KEYS[5] -> homeindex:<m>:jobs      HASH
// KEYS[6] -> <m>:failed              HASH
// ARGV[1] -> timeouts member
// ARGV[2] -> item (the member's d)
// ARGV[3] -> document id
// ARGV[4] -> next attempt's item
// ARGV[5] -> phase ('check' or 'run')
// ARGV[6] -> attempt number; ARGV[7] -> max attempts; ARGV[8] -> backoff ms
// ARGV[9] -> reason; ARGV[10] -> module
//
// Returns: 0 member gone (the worker finished); -1 not expired (renewed); -2 member removed
// but the item was not in the processing list (nothing else to do); -3 item removed but it is
// not the job's current attempt (dropped); else retry_or_park's 1, 2 or 3.
var requeueExpiredScript = newScript(luaNow + luaRetryOrPark + `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return 0 end
if tonumber(score) > now_s then return -1 end
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('LREM', KEYS[2], 1, ARGV[2]) == 0 then return -2 end
if redis.call('HGET', KEYS[5], ARGV[3]) ~= ARGV[2] then return -3 end
return retry_or_park(KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[3], ARGV[2], ARGV[4], ARGV[5],
  ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10])
`)

// dropExpiredScript removes an expired member and its item without a retry (the item is not
// ours, was built for another uid, or belongs to an unconfigured module).
//
// KEYS[1] -> timeouts                ZSET
// KEYS[2] -> <m>:<phase>:processing  LIST  (optional: absent when q is not a valid queue key)
// KEYS[3] -> homeindex:<m>:jobs      HASH  (optional)
// ARGV[1] -> timeouts member; ARGV[2] -> item; ARGV[3] -> document id or ""
//
// Returns: 0 member gone; -1 not expired; 1 dropped (member removed, item removed from the
// processing list, jobs entry deleted if it held this item).
var dropExpiredScript = newScript(luaNow + `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return 0 end
if tonumber(score) > now_s then return -1 end
redis.call('ZREM', KEYS[1], ARGV[1])
if #KEYS >= 3 then
  redis.call('LREM', KEYS[2], 1, ARGV[2])
  if ARGV[3] ~= '' and redis.call('HGET', KEYS[3], ARGV[3]) == ARGV[2] then
    redis.call('HDEL', KEYS[3], ARGV[3])
  end
end
return 1
`)

// promoteRetriesScript moves retry-set items whose backoff ended to the head of their queue, and
// reports the queue heads so the caller can drop items built for another uid (a worker with
// the new uid pushes those back to the head and sleeps, so they would block the queue).
//
// KEYS[1] -> homeindex:<m>:retry  ZSET  "check|<item>" / "run|<item>" -> due (epoch ms)
// KEYS[2] -> <m>:check            LIST
// KEYS[3] -> <m>:run              LIST
// ARGV[1] -> maximum number of items to move
//
// Returns: {moved, head of <m>:check or "", head of <m>:run or ""}. Items due earliest end
// nearest the head.
var promoteRetriesScript = newScript(luaNow + `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now_ms, 'LIMIT', 0, tonumber(ARGV[1]))
for i = #due, 1, -1 do
  local m = due[i]
  redis.call('ZREM', KEYS[1], m)
  local sep = string.find(m, '|', 1, true)
  if sep then
    local dest = KEYS[2]
    if string.sub(m, 1, sep - 1) == 'run' then dest = KEYS[3] end
    redis.call('LPUSH', dest, string.sub(m, sep + 1))
  end
end
return {#due, redis.call('LINDEX', KEYS[2], 0) or '', redis.call('LINDEX', KEYS[3], 0) or ''}
`)

// dropItemsScript removes items from one container and releases their jobs entries.
//
// KEYS[1] -> container: a queue LIST, the retry ZSET or the failed HASH
// KEYS[2] -> homeindex:<m>:jobs  HASH
// ARGV[1] -> 'list', 'zset' or 'hash' (KEYS[1]'s type)
// ARGV[3k-1], ARGV[3k], ARGV[3k+1] -> (k = 1..n) the member (list item, zset member, or
// the hash value to compare), the document id or "", the item
//
// Returns: an array of n integers, 1 if member k was removed, 0 if it was no longer there. A
// removed member's jobs entry is deleted if it held that item. list: LREM count 1; zset: ZREM;
// hash: HDEL id only if its value is the member.
var dropItemsScript = newScript(`
local out = {}
for i = 2, #ARGV, 3 do
  local member, id, item = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local n = 0
  if ARGV[1] == 'list' then
    n = redis.call('LREM', KEYS[1], 1, member)
  elseif ARGV[1] == 'zset' then
    n = redis.call('ZREM', KEYS[1], member)
  elseif id ~= '' and redis.call('HGET', KEYS[1], id) == member then
    n = redis.call('HDEL', KEYS[1], id)
  end
  out[#out + 1] = n
  if n > 0 then
    if id ~= '' and redis.call('HGET', KEYS[2], id) == item then
      redis.call('HDEL', KEYS[2], id)
    end
  end
end
return out
`)

// Reap runs one reaper pass: every timeouts member past its deadline by the Redis clock ends
// its attempt as failed (retried with backoff, or parked after MaxAttempts); retry-set items
// whose backoff ended go to the head of their queue; queue heads built for another uid are
// dropped. With nothing expired it costs one ZRANGEBYSCORE plus one script per module.
func (c *Client) Reap(ctx context.Context, o ReapOptions) (ReapResult, error) {
	var res ReapResult
	o.Policy = o.Policy.withDefaults()
	if o.Batch <= 0 {
		o.Batch = DefaultReapBatch
	}
	uids := make(map[string]string, len(o.Modules))
	for _, m := range o.Modules {
		uids[m.Name] = m.UID
	}
	for range reapMaxRounds {
		members, err := listExpiredScript.Run(ctx, c.rdb, []string{protocol.TimeoutsKey}, o.Batch).StringSlice()
		if err != nil {
			return res, fmt.Errorf("reap: list expired: %w", err)
		}
		if err := c.reapMembers(ctx, members, uids, o.Policy, &res); err != nil {
			return res, err
		}
		if len(members) < o.Batch {
			break
		}
	}
	if err := c.promote(ctx, o.Modules, o.Batch, &res); err != nil {
		return res, err
	}
	return res, nil
}

// reapCall remembers what a pipelined script call was about, to read its reply.
type reapCall struct {
	module, id, token string
	attempt           int
	reason            string
	drop              bool
}

func (c *Client) reapMembers(ctx context.Context, members []string, uids map[string]string, p RetryPolicy, res *ReapResult) error {
	res.Expired += len(members)
	calls := make([]scriptCall, 0, len(members))
	meta := make([]reapCall, 0, len(members))
	for _, member := range members {
		sc, rc := c.planReap(member, uids, p)
		calls = append(calls, sc)
		meta = append(meta, rc)
	}
	cmds, err := c.runScripts(ctx, calls)
	if err != nil {
		return fmt.Errorf("reap: %w", err)
	}
	for i, cmd := range cmds {
		n, err := cmd.Int64()
		if err != nil {
			return fmt.Errorf("reap %s: %w", meta[i].module, err)
		}
		m := meta[i]
		switch {
		case n == expiredGone || n == expiredRenewed || n == expiredNotInList:
			res.Gone++
		case m.drop && n == expiredDropped, n == expiredNotCurrent:
			reason := m.reason
			if n == expiredNotCurrent {
				reason = "not the job's current attempt"
			}
			res.Dropped = append(res.Dropped, Dropped{Module: m.module, ID: m.id, Reason: reason})
		case Outcome(n) == OutcomeRequeued:
			res.Requeued++
		case Outcome(n) == OutcomeRetrying:
			res.Retrying++
		case Outcome(n) == OutcomeParked:
			res.Parked = append(res.Parked, Parked{Module: m.module, ID: m.id, Token: m.token, Attempts: m.attempt, Reason: m.reason})
		default:
			return unexpected("reap", n)
		}
	}
	return nil
}

// planReap decides, from the member alone, which script handles it.
func (c *Client) planReap(member string, uids map[string]string, p RetryPolicy) (scriptCall, reapCall) {
	queue, item, err := protocol.ParseTimeoutMember(member)
	if err != nil {
		return scriptCall{dropExpiredScript, []string{protocol.TimeoutsKey}, []any{member, "", ""}},
			reapCall{drop: true, reason: "malformed timeouts member: " + err.Error()}
	}
	module, phase, ok := protocol.ParseQueueKey(queue)
	if !ok {
		return scriptCall{dropExpiredScript, []string{protocol.TimeoutsKey}, []any{member, item, ""}},
			reapCall{drop: true, reason: fmt.Sprintf("timeouts member names no module queue: %q", queue)}
	}
	rc := reapCall{module: module}
	dropKeys := []string{protocol.TimeoutsKey, protocol.ProcessingKey(queue), protocol.JobsKey(module)}
	info, err := protocol.ParseItem(item)
	if err != nil {
		rc.drop, rc.reason = true, "unreadable item: "+err.Error()
		return scriptCall{dropExpiredScript, dropKeys, []any{member, item, ""}}, rc
	}
	rc.id = info.ID
	uid, configured := uids[module]
	switch {
	case !configured:
		rc.drop, rc.reason = true, "module not configured"
	case !info.HasJob:
		rc.drop, rc.reason = true, "item has no job fields (not dispatched by this daemon)"
	case info.UID != uid:
		rc.drop, rc.reason = true, fmt.Sprintf("item built for uid %q, module uid is %q", info.UID, uid)
	}
	next, delay, err := "", int64(0), error(nil)
	if !rc.drop {
		if next, delay, err = nextAttempt(item, info, p); err != nil {
			rc.drop, rc.reason = true, "cannot rewrite item: "+err.Error()
		}
	}
	if rc.drop {
		return scriptCall{dropExpiredScript, dropKeys, []any{member, item, info.ID}}, rc
	}
	rc.token, rc.attempt = info.Job.Token, info.Job.Attempt
	rc.reason = fmt.Sprintf("timed out in %s (attempt %d)", phase, info.Job.Attempt)
	return scriptCall{requeueExpiredScript,
		[]string{protocol.TimeoutsKey, protocol.ProcessingKey(queue), queue, protocol.RetryKey(module),
			protocol.JobsKey(module), protocol.FailedKey(module)},
		[]any{member, item, info.ID, next, string(phase), info.Job.Attempt, p.MaxAttempts, delay, rc.reason, module},
	}, rc
}

// promote runs promoteRetriesScript for every module in one pipeline, then drops queue heads built
// for another uid.
func (c *Client) promote(ctx context.Context, modules []Module, batch int, res *ReapResult) error {
	calls := make([]scriptCall, len(modules))
	for i, m := range modules {
		calls[i] = scriptCall{promoteRetriesScript,
			[]string{protocol.RetryKey(m.Name), protocol.CheckKey(m.Name), protocol.RunKey(m.Name)}, []any{batch}}
	}
	cmds, err := c.runScripts(ctx, calls)
	if err != nil {
		return fmt.Errorf("reap: promote retries: %w", err)
	}
	for i, cmd := range cmds {
		m := modules[i]
		v, err := cmd.Slice()
		if err != nil {
			return fmt.Errorf("reap: promote %s: %w", m.Name, err)
		}
		if len(v) != 3 {
			return unexpected("promote", v)
		}
		moved, _ := v[0].(int64)
		res.Promoted += int(moved)
		for j, p := range []protocol.Phase{protocol.PhaseCheck, protocol.PhaseRun} {
			head, _ := v[1+j].(string)
			if head == "" {
				continue
			}
			if uid, ours := protocol.ItemUID(head); ours && uid == m.UID {
				continue
			}
			d, err := c.dropStale(ctx, m, protocol.QueueKey(m.Name, p), "list", []string{head})
			if err != nil {
				return fmt.Errorf("reap: %w", err)
			}
			res.Dropped = append(res.Dropped, d...)
		}
	}
	return nil
}

// dropStale removes members of one container (see dropItemsScript) and reports them as dropped
// for carrying another uid (or no job fields). For kind "zset" members are retry members;
// for "hash" they are failed records.
func (c *Client) dropStale(ctx context.Context, m Module, container, kind string, members []string) ([]Dropped, error) {
	if len(members) == 0 {
		return nil, nil
	}
	args := make([]any, 0, 1+3*len(members))
	args = append(args, kind)
	drops := make([]Dropped, 0, len(members))
	for _, member := range members {
		item := member
		switch kind {
		case "zset":
			if _, rest, ok := cutPhase(member); ok {
				item = rest
			}
		case "hash":
			var rec failedRecord
			if err := decodeFailed(member, &rec); err == nil {
				item = rec.Item
			}
		}
		id, reason := staleReason(item, m.UID)
		args = append(args, member, id, item)
		drops = append(drops, Dropped{Module: m.Name, ID: id, Reason: reason})
	}
	v, err := dropItemsScript.Run(ctx, c.rdb, []string{container, protocol.JobsKey(m.Name)}, args...).Slice()
	if err != nil {
		return nil, fmt.Errorf("drop stale items from %s: %w", container, err)
	}
	if len(v) != len(members) {
		return nil, unexpected("drop", v)
	}
	out := drops[:0]
	for i, f := range v {
		if n, _ := f.(int64); n == 1 {
			out = append(out, drops[i])
		}
	}
	return out, nil
}

// staleReason returns the item's id ("" if unreadable) and why it does not belong to uid.
func staleReason(item, uid string) (id, reason string) {
	info, err := protocol.ParseItem(item)
	if err != nil {
		return "", "unreadable item: " + err.Error()
	}
	if !info.HasJob {
		return info.ID, "item has no job fields (not dispatched by this daemon)"
	}
	return info.ID, fmt.Sprintf("item built for uid %q, module uid is %q", info.UID, uid)
}

// cutPhase splits a retry member into its phase and item.
func cutPhase(member string) (protocol.Phase, string, bool) {
	for _, p := range []protocol.Phase{protocol.PhaseCheck, protocol.PhaseRun} {
		if len(member) > len(p)+1 && member[:len(p)+1] == string(p)+"|" {
			return p, member[len(p)+1:], true
		}
	}
	return "", "", false
}
