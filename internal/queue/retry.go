package queue

import (
	"fmt"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// Retry defaults (MAX_ATTEMPTS, RETRY_BASE, RETRY_MAX).
const (
	DefaultMaxAttempts = 5
	DefaultRetryBase   = time.Second
	DefaultRetryMax    = 5 * time.Minute
)

// RetryPolicy decides what happens to a failed attempt (timeout, orphan, lost item, module
// error): retry after Delay(attempt), or park the job in <module>:failed once attempt reaches
// MaxAttempts. Zero fields take the defaults above.
type RetryPolicy struct {
	MaxAttempts int
	Base        time.Duration // delay after the first failed attempt; doubles each time
	Max         time.Duration // cap on the delay
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.Base == 0 {
		p.Base = DefaultRetryBase
	}
	if p.Max == 0 {
		p.Max = DefaultRetryMax
	}
	return p
}

// Delay is the backoff after failed attempt n (1-based): Base·2^(n-1), at most Max. A negative
// Base means no delay (straight back to the head of the queue).
func (p RetryPolicy) Delay(attempt int) time.Duration {
	p = p.withDefaults()
	if p.Base < 0 {
		return 0
	}
	d := p.Base
	for i := 1; i < attempt && d < p.Max; i++ {
		d *= 2
	}
	return min(d, p.Max)
}

// Outcome is what became of a failed attempt.
type Outcome int

// Outcomes of a failed attempt; the values are the retry_or_park script codes.
const (
	OutcomeStale    Outcome = 0 // not the job's current attempt: nothing changed
	OutcomeRequeued Outcome = 1 // next attempt at the head of its queue now
	OutcomeRetrying Outcome = 2 // next attempt waits in the retry ZSET for its backoff
	OutcomeParked   Outcome = 3 // attempts used up: parked in <module>:failed
)

func (o Outcome) String() string {
	switch o {
	case OutcomeStale:
		return "stale"
	case OutcomeRequeued:
		return "requeued"
	case OutcomeRetrying:
		return "retrying"
	case OutcomeParked:
		return "parked"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Parked is a job that used up its attempts.
type Parked struct {
	Module   string
	ID       string
	Token    string
	Attempts int
	Reason   string
}

// Dropped is an item removed without a retry: not ours (no job fields), built for another
// module uid, or not the job's current attempt. The catalog should re-dispatch the job if it
// still wants it.
type Dropped struct {
	Module string
	ID     string // "" when the item had no readable id
	Reason string
}

// luaRetryOrPark defines retry_or_park, shared by every script that ends an attempt as
// failed. It must run after luaNow. Arguments:
//
//	queue   LIST  the phase's queue (<m>:check or <m>:run), head = next to run
//	retry   ZSET  homeindex:<m>:retry
//	jobs    HASH  homeindex:<m>:jobs
//	failed  HASH  <m>:failed
//	id, old, new  document id; the failed item; the next attempt's item
//	phase   'check' or 'run'
//	attempt the failed attempt's number; max  MaxAttempts; delay  backoff in ms
//	reason, module  recorded when parking
//
// Returns 1 (requeued at the head), 2 (in retry until now+delay) or 3 (parked: the jobs entry
// is deleted, a parked job is not in flight; the catalog records the failure).
const luaRetryOrPark = `
local function retry_or_park(queue, retry, jobs, failed, id, old, new, phase, attempt, max, delay, reason, module)
  if tonumber(attempt) >= tonumber(max) then
    redis.call('HDEL', jobs, id)
    redis.call('HSET', failed, id, cjson.encode({id = id, module = module, phase = phase, item = old,
      reason = reason, attempts = tonumber(attempt), failed_at = now_ms}))
    return 3
  end
  redis.call('HSET', jobs, id, new)
  if tonumber(delay) <= 0 then
    redis.call('LPUSH', queue, new)
    return 1
  end
  redis.call('ZADD', retry, now_ms + tonumber(delay), phase .. '|' .. new)
  return 2
end
`

// nextAttempt returns the item of the attempt after info's, and the backoff after info's.
func nextAttempt(item string, info protocol.ItemInfo, p RetryPolicy) (next string, delayMS int64, err error) {
	j := info.Job
	j.Attempt++
	next, err = protocol.WithJob(item, j)
	if err != nil {
		return "", 0, err
	}
	return next, p.Delay(info.Job.Attempt).Milliseconds(), nil
}
