package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
)

// NextDone takes the oldest result from modules:done into modules:done:processing (BLMOVE) and
// returns it, waiting up to timeout (at least 1 s: go-redis sends whole seconds); ErrNoDone
// when none came. The result stays in modules:done:processing until AckDone or Quarantine, so
// a crash loses nothing.
func (c *Client) NextDone(ctx context.Context, timeout time.Duration) (string, error) {
	timeout = max(timeout, time.Second)
	raw, err := c.rdb.BLMove(ctx, protocol.DoneKey, protocol.DoneProcessingKey, "LEFT", "RIGHT", timeout).Result()
	if errors.Is(err, redis.Nil) {
		return "", ErrNoDone
	}
	if err != nil {
		return "", fmt.Errorf("next result: %w", err)
	}
	return raw, nil
}

// takeDoneScript moves results from modules:done to modules:done:processing, like NextDone's
// BLMOVE but without waiting, several at once and without ever sending an oversized result to
// the daemon: a result over the size cap goes straight to modules:quarantine with its reason
// (the record built here from the payload Redis already holds), so what a module sends never
// sets the daemon's memory use.
//
// KEYS[1] -> modules:done             LIST
// KEYS[2] -> modules:done:processing  LIST
// KEYS[3] -> modules:quarantine       LIST
// ARGV[1] -> the most results to look at
// ARGV[2] -> the size cap in bytes; the results taken total at most this, or one result
// ARGV[3] -> the time for quarantine records (RFC 3339)
//
// Returns: {taken, reasons}: the results moved, oldest first, and one reason per result
// quarantined for its size.
var takeDoneScript = newScript(`
local taken, reasons = {}, {}
local cap = tonumber(ARGV[2])
local bytes = 0
for i = 1, tonumber(ARGV[1]) do
  local r = redis.call('LINDEX', KEYS[1], 0)
  if not r then break end
  local n = string.len(r)
  if n > cap then
    redis.call('LPOP', KEYS[1])
    local reason = 'payload too large: ' .. n .. ' bytes, limit ' .. cap
    redis.call('RPUSH', KEYS[3], cjson.encode({reason = reason, payload = r, at = ARGV[3]}))
    reasons[#reasons + 1] = reason
  else
    if #taken > 0 and bytes + n > cap then break end
    redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
    taken[#taken + 1] = r
    bytes = bytes + n
  end
end
return {taken, reasons}
`)

// Taken is what one NextDones call took.
type Taken struct {
	Results []string // moved to modules:done:processing, oldest first
	// Oversized holds one reason per result over the size cap: each went straight to
	// modules:quarantine without reaching the daemon.
	Oversized []string
}

// takeDoneTimeout bounds one takeDoneScript call: a few oversized results of 100 MB each.
const takeDoneTimeout = time.Minute

// Polling bounds of NextDones while modules:done is empty.
const (
	pollMin = time.Millisecond
	pollMax = 20 * time.Millisecond
)

// NextDones takes up to max results totalling at most maxBytes (always one when there is one)
// into modules:done:processing, in one round trip when results are waiting. Results over
// maxBytes are quarantined inside Redis (takeDoneScript). While modules:done is empty it polls,
// backing off from 1 ms to 20 ms, until timeout: a blocking BLMOVE would hand the daemon
// whatever arrives, whatever its size. (An idle merger costs ~50 small script calls a second.)
// ErrNoDone when nothing came. Each result stays in modules:done:processing until AckDone(s)
// or Quarantine.
func (c *Client) NextDones(ctx context.Context, timeout time.Duration, max, maxBytes int) (Taken, error) {
	deadline := time.Now().Add(timeout)
	wait := pollMin
	for {
		t, err := c.takeDone(ctx, max, maxBytes)
		if err != nil || len(t.Results) > 0 || len(t.Oversized) > 0 {
			return t, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return t, ErrNoDone
		}
		timer := time.NewTimer(min(wait, left))
		select {
		case <-ctx.Done():
			timer.Stop()
			return t, ctx.Err()
		case <-timer.C:
		}
		wait = min(2*wait, pollMax)
	}
}

func (c *Client) takeDone(ctx context.Context, max, maxBytes int) (Taken, error) {
	if err := ctx.Err(); err != nil {
		return Taken{}, err
	}
	// Not cancelled midway: a reply lost to a cancellation would leave the results it moved
	// in modules:done:processing until the next start, and the reasons of those it
	// quarantined unlogged. Quarantining oversized results takes Redis seconds (Client.long).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), takeDoneTimeout)
	defer cancel()
	keys := []string{protocol.DoneKey, protocol.DoneProcessingKey, protocol.QuarantineKey}
	v, err := takeDoneScript.Run(ctx, c.long, keys, max, maxBytes, time.Now().UTC().Format(time.RFC3339Nano)).Slice()
	if err != nil {
		return Taken{}, fmt.Errorf("next results: %w", err)
	}
	if len(v) != 2 {
		return Taken{}, fmt.Errorf("next results: reply of %d parts, want 2", len(v))
	}
	var t Taken
	for i, dst := range []*[]string{&t.Results, &t.Oversized} {
		part, _ := v[i].([]any)
		for _, e := range part {
			str, ok := e.(string)
			if !ok {
				return Taken{}, fmt.Errorf("next results: unexpected %T in reply", e)
			}
			*dst = append(*dst, str)
		}
	}
	return t, nil
}

// ackDoneScript removes a committed result and, given a job, releases the job's in-flight entry.
//
// KEYS[1] -> modules:done:processing  LIST
// KEYS[2] -> homeindex:<m>:jobs       HASH  (absent when no job is given)
// ARGV[1] -> the result, exactly as NextDone returned it
// ARGV[2] -> document id; ARGV[3] -> `"_hi_job":"<token>","_hi_attempt":<n>,` (with KEYS[2])
//
// Returns: 0 if the result was not in KEYS[1] (nothing done); 1 removed; 2 removed and the
// jobs entry deleted (it held that token and attempt).
var ackDoneScript = newScript(`
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
if #KEYS < 2 then return 1 end
local cur = redis.call('HGET', KEYS[2], ARGV[2])
if cur and string.find(cur, ARGV[3], 1, true) then
  redis.call('HDEL', KEYS[2], ARGV[2])
  return 2
end
return 1
`)

// AckDone removes a result from modules:done:processing after the catalog committed it
// (merged, or dropped as stale). With ref, the job's in-flight entry is released in the same
// step if ref is still its current attempt, so the dispatcher may queue that document again.
// It returns ErrNotPending when the result is not there.
func (c *Client) AckDone(ctx context.Context, raw string, ref *JobRef) error {
	keys := []string{protocol.DoneProcessingKey}
	args := []any{raw}
	if ref != nil {
		keys = append(keys, protocol.JobsKey(ref.Module))
		args = append(args, ref.ID, jobMarker(ref.Token, ref.Attempt))
	}
	n, err := ackDoneScript.Run(ctx, c.rdb, keys, args...).Int64()
	if err != nil {
		return fmt.Errorf("ack result: %w", err)
	}
	switch n {
	case ackNotPending:
		return ErrNotPending
	case ackRemoved, ackReleased:
		return nil
	}
	return unexpected("ack", n)
}

// Ack is one result to acknowledge with AckDones.
type Ack struct {
	Raw string
	Ref *JobRef // nil: no job to release
}

// AckDones is AckDone for many results in one pipeline; errs[i] is acks[i]'s outcome
// (ErrNotPending when that result was not there). err is set when the batch did not run.
func (c *Client) AckDones(ctx context.Context, acks []Ack) (errs []error, err error) {
	calls := make([]scriptCall, len(acks))
	for i, a := range acks {
		calls[i] = scriptCall{s: ackDoneScript, keys: []string{protocol.DoneProcessingKey}, args: []any{a.Raw}}
		if a.Ref != nil {
			calls[i].keys = append(calls[i].keys, protocol.JobsKey(a.Ref.Module))
			calls[i].args = append(calls[i].args, a.Ref.ID, jobMarker(a.Ref.Token, a.Ref.Attempt))
		}
	}
	cmds, err := c.runScripts(ctx, calls)
	if err != nil {
		return nil, fmt.Errorf("ack results: %w", err)
	}
	errs = make([]error, len(acks))
	for i, cmd := range cmds {
		n, err := cmd.Int64()
		switch {
		case err != nil:
			errs[i] = fmt.Errorf("ack result: %w", err)
		case n == ackNotPending:
			errs[i] = ErrNotPending
		case n != ackRemoved && n != ackReleased:
			errs[i] = unexpected("ack", n)
		}
	}
	return errs, nil
}

// jobMarker is the substring of an item that names one attempt of one dispatch.
func jobMarker(token string, attempt int) string {
	return `"` + protocol.FieldJob + `":"` + token + `","` + protocol.FieldAttempt + `":` + strconv.Itoa(attempt) + `,`
}

// quarantineScript moves a result from modules:done:processing to modules:quarantine, as a
// QuarantineRecord built here (so the daemon never holds a second, escaped copy of a payload
// that may weigh megabytes).
//
// KEYS[1] -> modules:done:processing  LIST
// KEYS[2] -> modules:quarantine       LIST
// ARGV[1] -> the result; ARGV[2] -> the reason; ARGV[3] -> the time (RFC 3339)
//
// Returns: 1 moved; 0 the result was not in KEYS[1] (nothing done).
var quarantineScript = newScript(`
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
redis.call('RPUSH', KEYS[2], cjson.encode({reason = ARGV[2], payload = ARGV[1], at = ARGV[3]}))
return 1
`)

// QuarantineRecord is one entry of modules:quarantine.
type QuarantineRecord struct {
	Reason  string    `json:"reason"`
	Payload string    `json:"payload"` // the result exactly as received
	At      time.Time `json:"at"`
}

// Quarantine moves a malformed result from modules:done:processing to modules:quarantine with
// the reason, in one step. It returns ErrNotPending when the result is not there. The job's
// in-flight entry stays: call Fail if the result named its job, or the orphan sweep retries
// it as lost.
func (c *Client) Quarantine(ctx context.Context, raw, reason string) error {
	n, err := quarantineScript.Run(ctx, c.rdb, []string{protocol.DoneProcessingKey, protocol.QuarantineKey},
		raw, reason, time.Now().UTC().Format(time.RFC3339Nano)).Int64()
	if err != nil {
		return fmt.Errorf("quarantine: %w", err)
	}
	switch n {
	case quarantineNotPending:
		return ErrNotPending
	case quarantineMoved:
		return nil
	}
	return unexpected("quarantine", n)
}

// Quarantined lists up to limit quarantine records from the oldest (LRANGE of one page).
func (c *Client) Quarantined(ctx context.Context, limit int) ([]QuarantineRecord, error) {
	raws, err := c.rdb.LRange(ctx, protocol.QuarantineKey, 0, int64(max(limit, 1))-1).Result()
	if err != nil {
		return nil, fmt.Errorf("list quarantine: %w", err)
	}
	out := make([]QuarantineRecord, 0, len(raws))
	for _, r := range raws {
		var q QuarantineRecord
		if err := json.Unmarshal([]byte(r), &q); err != nil {
			q = QuarantineRecord{Reason: "unreadable quarantine record", Payload: r}
		}
		out = append(out, q)
	}
	return out, nil
}

// restoreBatch bounds the moves of one restoreDoneScript call.
const restoreBatch = 256

// restoreDoneScript moves results back from modules:done:processing to the head of
// modules:done, keeping their order.
//
// KEYS[1] -> modules:done:processing  LIST
// KEYS[2] -> modules:done             LIST
// ARGV[1] -> maximum number to move
//
// Returns: the number moved (LMOVE RIGHT→LEFT, one at a time).
var restoreDoneScript = newScript(`
local n = 0
while n < tonumber(ARGV[1]) do
  if not redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT') then break end
  n = n + 1
end
return n
`)

// RestoreDone puts results left in modules:done:processing (the daemon died before acking
// them, or a take's reply was lost) back at the head of modules:done, in order, so NextDone
// replays them. Call it only while no NextDone result is being handled: at start, or when the
// merger is idle (NextDone returned ErrNoDone), since then anything there is a leftover. Each
// move is atomic, so a crash midway loses nothing.
func (c *Client) RestoreDone(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := restoreDoneScript.Run(ctx, c.rdb, []string{protocol.DoneProcessingKey, protocol.DoneKey}, restoreBatch).Int64()
		if err != nil {
			return total, fmt.Errorf("restore results: %w", err)
		}
		total += int(n)
		if n < restoreBatch {
			return total, nil
		}
	}
}
