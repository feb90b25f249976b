package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
)

// pushBatch bounds the arguments of one push script call.
const pushBatch = 512

// Item is one job to dispatch to a module.
type Item struct {
	ID       string          // document id: the job's identity within the module
	Document json.RawMessage // the document JSON, an available path first in "paths"
	UID      string          // the module's uid from MODULES; "" when it has none
	Token    string          // dispatch token (protocol.NewToken), kept by the catalog
	Attempt  int             // attempt number; 0 means 1
	// Since is when the job was first dispatched; zero means now.
	Since time.Time
}

// Build returns the item's wire string (protocol.BuildItem).
func (it Item) Build() (string, error) {
	since := it.Since
	if since.IsZero() {
		since = time.Now()
	}
	return protocol.BuildItem(it.ID, it.Document, it.UID, protocol.Job{
		Token: it.Token, Attempt: max(it.Attempt, 1), Since: since.UnixMilli(),
	})
}

// pushScript queues items whose document has no job in flight for the module.
//
// KEYS[1] -> <m>:check            LIST  destination
// KEYS[2] -> homeindex:<m>:jobs   HASH  id -> current item
// KEYS[3] -> <m>:failed           HASH  id -> parked record
// ARGV[1] -> "1" to push to the head (in the given order), "0" to append
// ARGV[2k], ARGV[2k+1] -> document id, item (k = 1..n)
//
// Returns: an array of n integers, 1 if item k was queued (a parked record for its id is
// superseded and deleted), 0 if its id already had a job in flight.
var pushScript = newScript(`
local queued = {}
local flags = {}
for i = 2, #ARGV, 2 do
  if redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1]) == 1 then
    redis.call('HDEL', KEYS[3], ARGV[i])
    queued[#queued + 1] = ARGV[i + 1]
    flags[#flags + 1] = 1
  else
    flags[#flags + 1] = 0
  end
end
if ARGV[1] == '1' then
  for i = #queued, 1, -1 do
    redis.call('LPUSH', KEYS[1], queued[i])
  end
else
  for i = 1, #queued do
    redis.call('RPUSH', KEYS[1], queued[i])
  end
end
return flags
`)

// PushResult says which items Push queued.
type PushResult struct {
	Pushed  int
	Skipped []string // ids that already had a job in flight (queued, running, retrying or awaiting merge)
}

// Push queues items on <module>:check: at the tail, or at the head when front is true (a drive
// that just appeared), keeping their order either way. An id that already has a job in flight
// for the module is skipped, so a job is never queued twice and Push is idempotent. Pushing a
// parked job dispatches it anew and deletes its parked record. Cost: O(len(items)).
func (c *Client) Push(ctx context.Context, module string, items []Item, front bool) (PushResult, error) {
	var res PushResult
	if !protocol.ValidModuleName(module) {
		return res, fmt.Errorf("push: invalid module name %q", module)
	}
	keys := []string{protocol.CheckKey(module), protocol.JobsKey(module), protocol.FailedKey(module)}
	flag := "0"
	if front {
		flag = "1"
	}
	// With front, the last batch must land first so the whole slice keeps its order at the head.
	batches := make([][]Item, 0, len(items)/pushBatch+1)
	for i := 0; i < len(items); i += pushBatch {
		batches = append(batches, items[i:min(i+pushBatch, len(items))])
	}
	if front {
		for i, j := 0, len(batches)-1; i < j; i, j = i+1, j-1 {
			batches[i], batches[j] = batches[j], batches[i]
		}
	}
	for _, batch := range batches {
		args := make([]any, 0, 1+2*len(batch))
		args = append(args, flag)
		for _, it := range batch {
			s, err := it.Build()
			if err != nil {
				return res, fmt.Errorf("push %s: %w", module, err)
			}
			args = append(args, it.ID, s)
		}
		v, err := pushScript.Run(ctx, c.rdb, keys, args...).Result()
		if err != nil {
			return res, fmt.Errorf("push %s: %w", module, err)
		}
		flags, err := replySlice("push", v)
		if err != nil || len(flags) != len(batch) {
			return res, unexpected("push", v)
		}
		for i, f := range flags {
			if n, _ := f.(int64); n == 1 {
				res.Pushed++
			} else {
				res.Skipped = append(res.Skipped, batch[i].ID)
			}
		}
	}
	return res, nil
}

// withdrawScript takes not-yet-started jobs back out of the queues.
//
// KEYS[1] -> <m>:check             LIST
// KEYS[2] -> <m>:run               LIST
// KEYS[3] -> homeindex:<m>:retry   ZSET  members "check|<item>" / "run|<item>"
// KEYS[4] -> homeindex:<m>:jobs    HASH  id -> current item
// ARGV[k] -> document id (k = 1..n)
//
// Returns: an array of n integers, 1 if job k was withdrawn (its item removed with LREM
// count 1 or ZREM, and its jobs entry deleted), 0 if it had no job or its item is not waiting
// (a worker has it, its result awaits merge, or it is parked).
var withdrawScript = newScript(`
local out = {}
for i = 1, #ARGV do
  local item = redis.call('HGET', KEYS[4], ARGV[i])
  out[i] = 0
  if item and (redis.call('LREM', KEYS[1], 1, item) > 0 or redis.call('LREM', KEYS[2], 1, item) > 0
      or redis.call('ZREM', KEYS[3], 'check|' .. item) > 0 or redis.call('ZREM', KEYS[3], 'run|' .. item) > 0) then
    redis.call('HDEL', KEYS[4], ARGV[i])
    out[i] = 1
  end
end
return out
`)

// Withdraw takes the jobs of ids that no worker has started out of <module>:check, <module>:run
// and the retry set (a drive disappeared), and returns the ids withdrawn. Started jobs finish
// or time out as usual. Cost: O(len(ids) × queue length), queues being window-bounded.
func (c *Client) Withdraw(ctx context.Context, module string, ids []string) ([]string, error) {
	if !protocol.ValidModuleName(module) {
		return nil, fmt.Errorf("withdraw: invalid module name %q", module)
	}
	keys := []string{protocol.CheckKey(module), protocol.RunKey(module), protocol.RetryKey(module), protocol.JobsKey(module)}
	var out []string
	for i := 0; i < len(ids); i += pushBatch {
		batch := ids[i:min(i+pushBatch, len(ids))]
		args := make([]any, len(batch))
		for j, id := range batch {
			args[j] = id
		}
		v, err := withdrawScript.Run(ctx, c.rdb, keys, args...).Result()
		if err != nil {
			return out, fmt.Errorf("withdraw %s: %w", module, err)
		}
		flags, err := replySlice("withdraw", v)
		if err != nil || len(flags) != len(batch) {
			return out, unexpected("withdraw", v)
		}
		for j, f := range flags {
			if n, _ := f.(int64); n == 1 {
				out = append(out, batch[j])
			}
		}
	}
	return out, nil
}

// Counts is a module's queue state.
type Counts struct {
	Check, CheckProcessing, Run, RunProcessing int64 // list lengths
	Retry                                      int64 // attempts waiting for their backoff
	Jobs                                       int64 // jobs in flight, in any state but parked
	Failed                                     int64 // parked jobs
}

// Window is the dispatch window's fill: the four lists :check, :check:processing, :run and
// :run:processing. The dispatcher refills up to its window size.
func (n Counts) Window() int64 { return n.Check + n.CheckProcessing + n.Run + n.RunProcessing }

// Counts reads a module's queue lengths in one round trip (O(1) each).
func (c *Client) Counts(ctx context.Context, module string) (Counts, error) {
	pipe := c.rdb.Pipeline()
	cmds := []*redis.IntCmd{
		pipe.LLen(ctx, protocol.CheckKey(module)),
		pipe.LLen(ctx, protocol.CheckProcessingKey(module)),
		pipe.LLen(ctx, protocol.RunKey(module)),
		pipe.LLen(ctx, protocol.RunProcessingKey(module)),
		pipe.ZCard(ctx, protocol.RetryKey(module)),
		pipe.HLen(ctx, protocol.JobsKey(module)),
		pipe.HLen(ctx, protocol.FailedKey(module)),
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return Counts{}, fmt.Errorf("counts %s: %w", module, err)
	}
	return Counts{cmds[0].Val(), cmds[1].Val(), cmds[2].Val(), cmds[3].Val(), cmds[4].Val(), cmds[5].Val(), cmds[6].Val()}, nil
}

// InFlight returns the window fill of a module (Counts.Window), for the dispatcher's refill.
func (c *Client) InFlight(ctx context.Context, module string) (int64, error) {
	n, err := c.Counts(ctx, module)
	return n.Window(), err
}

// JobItem returns the current item of a module's job for a document, or "" and false when it
// has none in flight.
func (c *Client) JobItem(ctx context.Context, module, id string) (string, bool, error) {
	s, err := c.rdb.HGet(ctx, protocol.JobsKey(module), id).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("job %s/%s: %w", module, id, err)
	}
	return s, true, nil
}
