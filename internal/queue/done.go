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
	case 0:
		return ErrNotPending
	case 1, 2:
		return nil
	}
	return unexpected("ack", n)
}

// jobMarker is the substring of an item that names one attempt of one dispatch.
func jobMarker(token string, attempt int) string {
	return `"` + protocol.FieldJob + `":"` + token + `","` + protocol.FieldAttempt + `":` + strconv.Itoa(attempt) + `,`
}

// quarantineScript moves a result from modules:done:processing to modules:quarantine.
//
// KEYS[1] -> modules:done:processing  LIST
// KEYS[2] -> modules:quarantine       LIST
// ARGV[1] -> the result; ARGV[2] -> its quarantine record
//
// Returns: 1 moved; 0 the result was not in KEYS[1] (nothing done).
var quarantineScript = newScript(`
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
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
	rec, err := json.Marshal(QuarantineRecord{Reason: reason, Payload: raw, At: time.Now().UTC()})
	if err != nil {
		return fmt.Errorf("quarantine: %w", err)
	}
	n, err := quarantineScript.Run(ctx, c.rdb, []string{protocol.DoneProcessingKey, protocol.QuarantineKey}, raw, rec).Int64()
	if err != nil {
		return fmt.Errorf("quarantine: %w", err)
	}
	switch n {
	case 0:
		return ErrNotPending
	case 1:
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
// them, or a BLMOVE reply was lost) back at the head of modules:done, in order, so NextDone
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
