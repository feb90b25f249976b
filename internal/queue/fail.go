package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// JobRef names one attempt of a job, as echoed in a result's document.
type JobRef struct {
	Module  string
	ID      string // document id
	Token   string // protocol.FieldJob
	Attempt int    // protocol.FieldAttempt
}

// RefOf reads the JobRef of a done message, or ok false when its document carries no job
// fields (a module that returned a document of its own).
func RefOf(m protocol.DoneMessage) (ref JobRef, ok bool) {
	info, err := m.Item()
	if err != nil || !info.HasJob {
		return JobRef{}, false
	}
	return JobRef{Module: m.Module, ID: info.ID, Token: info.Job.Token, Attempt: info.Job.Attempt}, true
}

// failAttemptScript ends the job's current attempt as failed, wherever its item is.
//
// KEYS[1] -> homeindex:<m>:jobs      HASH
// KEYS[2] -> <m>:check:processing    LIST
// KEYS[3] -> <m>:run:processing      LIST
// KEYS[4] -> timeouts                ZSET
// KEYS[5] -> <m>:check               LIST
// KEYS[6] -> <m>:run                 LIST
// KEYS[7] -> homeindex:<m>:retry     ZSET
// KEYS[8] -> <m>:failed              HASH
// ARGV[1] -> document id; ARGV[2] -> the attempt's item; ARGV[3] -> next attempt's item
// ARGV[4] -> its check timeouts member; ARGV[5] -> its run timeouts member
// ARGV[6] -> attempt number; ARGV[7] -> max attempts; ARGV[8] -> backoff ms
// ARGV[9] -> reason; ARGV[10] -> module
//
// Returns: 0 if ARGV[2] is not the job's current item (stale: nothing changed); else the item
// is removed from every list, the retry set and timeouts, and retry_or_park's 1, 2 or 3. The
// next attempt goes to the run queue if the item was in :run or :run:processing, else to
// :check.
var failAttemptScript = newScript(luaNow + luaRetryOrPark + `
local item = ARGV[2]
if redis.call('HGET', KEYS[1], ARGV[1]) ~= item then return 0 end
local phase, queue = 'check', KEYS[5]
local in_run = redis.call('LREM', KEYS[3], 1, item) + redis.call('LREM', KEYS[6], 1, item)
  + redis.call('ZREM', KEYS[7], 'run|' .. item)
if in_run > 0 then phase, queue = 'run', KEYS[6] end
redis.call('LREM', KEYS[2], 1, item)
redis.call('LREM', KEYS[5], 1, item)
redis.call('ZREM', KEYS[7], 'check|' .. item)
redis.call('ZREM', KEYS[4], ARGV[4], ARGV[5])
return retry_or_park(queue, KEYS[7], KEYS[1], KEYS[8], ARGV[1], item, ARGV[3], phase,
  ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10])
`)

// Fail ends an attempt as failed (a module reported an error, or the merger judged its result
// unusable) through the same retry, backoff and parking as a timeout. It acts only if ref is
// the job's current attempt; otherwise it returns OutcomeStale and changes nothing.
func (c *Client) Fail(ctx context.Context, ref JobRef, reason string, p RetryPolicy) (Outcome, error) {
	p = p.withDefaults()
	item, ok, err := c.JobItem(ctx, ref.Module, ref.ID)
	if err != nil || !ok {
		return OutcomeStale, err
	}
	info, err := protocol.ParseItem(item)
	if err != nil || !info.HasJob || info.Job.Token != ref.Token || info.Job.Attempt != ref.Attempt {
		return OutcomeStale, nil
	}
	next, delay, err := nextAttempt(item, info, p)
	if err != nil {
		return OutcomeStale, fmt.Errorf("fail %s/%s: %w", ref.Module, ref.ID, err)
	}
	m := ref.Module
	v, err := failAttemptScript.Run(ctx, c.rdb,
		[]string{protocol.JobsKey(m), protocol.CheckProcessingKey(m), protocol.RunProcessingKey(m), protocol.TimeoutsKey,
			protocol.CheckKey(m), protocol.RunKey(m), protocol.RetryKey(m), protocol.FailedKey(m)},
		ref.ID, item, next, protocol.TimeoutMember(protocol.CheckKey(m), item), protocol.TimeoutMember(protocol.RunKey(m), item),
		info.Job.Attempt, p.MaxAttempts, delay, reason, m).Int64()
	if err != nil {
		return OutcomeStale, fmt.Errorf("fail %s/%s: %w", m, ref.ID, err)
	}
	if v < 0 || v > 3 {
		return OutcomeStale, unexpected("fail", v)
	}
	return Outcome(v), nil
}

// failedRecord is the JSON value of a <m>:failed entry, written by retry_or_park (cjson).
type failedRecord struct {
	ID       string `json:"id"`
	Module   string `json:"module"`
	Phase    string `json:"phase"`
	Item     string `json:"item"`
	Reason   string `json:"reason"`
	Attempts int    `json:"attempts"`
	FailedAt int64  `json:"failed_at"` // epoch ms, Redis clock
}

func decodeFailed(raw string, r *failedRecord) error {
	if err := json.Unmarshal([]byte(raw), r); err != nil {
		return fmt.Errorf("failed-job record: %w", err)
	}
	return nil
}

// FailedJob is a parked job: it used up its attempts.
type FailedJob struct {
	Module       string
	ID           string
	Phase        protocol.Phase // the phase of its last attempt
	Reason       string         // why the last attempt failed
	Attempts     int
	Token        string
	DispatchedAt time.Time // first dispatch (protocol.FieldSince)
	FailedAt     time.Time // last failure, Redis clock
	Item         string
}

func (r failedRecord) job() FailedJob {
	j := FailedJob{Module: r.Module, ID: r.ID, Phase: protocol.Phase(r.Phase), Reason: r.Reason,
		Attempts: r.Attempts, FailedAt: time.UnixMilli(r.FailedAt), Item: r.Item}
	if info, err := protocol.ParseItem(r.Item); err == nil {
		j.Token, j.DispatchedAt = info.Job.Token, time.UnixMilli(info.Job.Since)
	}
	return j
}

// failedPage is the HSCAN COUNT hint for <m>:failed.
const failedPage = 256

// Failed lists up to limit parked jobs of a module (in no particular order; limit <= 0 means
// all), paging with HSCAN.
func (c *Client) Failed(ctx context.Context, module string, limit int) ([]FailedJob, error) {
	var out []FailedJob
	err := c.scanFailed(ctx, module, func(id, raw string) bool {
		var r failedRecord
		if err := decodeFailed(raw, &r); err != nil {
			c.log.Warn().Err(err).Str("module", module).Str("id", id).Msg("unreadable parked job")
			return true
		}
		out = append(out, r.job())
		return limit <= 0 || len(out) < limit
	})
	return out, err
}

func (c *Client) scanFailed(ctx context.Context, module string, fn func(id, raw string) bool) error {
	var cursor uint64
	for {
		kv, next, err := c.rdb.HScan(ctx, protocol.FailedKey(module), cursor, "", failedPage).Result()
		if err != nil {
			return fmt.Errorf("scan %s: %w", protocol.FailedKey(module), err)
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if !fn(kv[i], kv[i+1]) {
				return nil
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// retryFailedScript puts a parked job back at the tail of <m>:check as a new dispatch.
//
// KEYS[1] -> <m>:failed            HASH
// KEYS[2] -> homeindex:<m>:jobs    HASH
// KEYS[3] -> <m>:check             LIST
// ARGV[1] -> document id; ARGV[2] -> the failed record read; ARGV[3] -> the new item
//
// Returns: 1 if queued; 0 if the record changed or went away meanwhile (nothing done); -1 if
// the job was dispatched anew meanwhile (the record is deleted, nothing queued).
var retryFailedScript = newScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return -1 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('RPUSH', KEYS[3], ARGV[3])
return 1
`)

// Retried is a parked job sent to run again, under a new dispatch token (the catalog must
// record it: results of the new dispatch echo it).
type Retried struct {
	ID    string
	Token string
}

// RetryFailed sends parked jobs of a module back to the tail of <module>:check with a new token
// and attempt 1: the ids given, or every parked job when ids is nil (on daemon start, when
// asked). Unknown ids are ignored.
func (c *Client) RetryFailed(ctx context.Context, module string, ids []string) ([]Retried, error) {
	records := map[string]string{}
	if ids == nil {
		if err := c.scanFailed(ctx, module, func(id, raw string) bool { records[id] = raw; return true }); err != nil {
			return nil, err
		}
	} else if len(ids) > 0 {
		vals, err := c.rdb.HMGet(ctx, protocol.FailedKey(module), ids...).Result()
		if err != nil {
			return nil, fmt.Errorf("retry failed %s: %w", module, err)
		}
		for i, v := range vals {
			if s, ok := v.(string); ok {
				records[ids[i]] = s
			}
		}
	}
	keys := []string{protocol.FailedKey(module), protocol.JobsKey(module), protocol.CheckKey(module)}
	var out []Retried
	for id, raw := range records {
		var r failedRecord
		if err := decodeFailed(raw, &r); err != nil {
			return out, fmt.Errorf("retry failed %s/%s: %w", module, id, err)
		}
		job := protocol.Job{Token: protocol.NewToken(), Attempt: 1, Since: time.Now().UnixMilli()}
		item, err := protocol.WithJob(r.Item, job)
		if err != nil {
			return out, fmt.Errorf("retry failed %s/%s: %w", module, id, err)
		}
		n, err := retryFailedScript.Run(ctx, c.rdb, keys, id, raw, item).Int64()
		if err != nil {
			return out, fmt.Errorf("retry failed %s/%s: %w", module, id, err)
		}
		if n == retryFailedQueued {
			out = append(out, Retried{ID: id, Token: job.Token})
		}
	}
	return out, nil
}
