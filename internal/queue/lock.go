package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
)

// acquireLockScript takes or extends the daemon lock.
//
// KEYS[1] -> homeindex:lock  STRING owner token, with a TTL
// ARGV[1] -> owner token; ARGV[2] -> TTL in ms
//
// Returns: 1 if the caller now holds the lock for ARGV[2] ms (it was free, or already the
// caller's); 0 if another owner holds it.
var acquireLockScript = newScript(`
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
return 1
`)

// takeOverLockScript takes the daemon lock from a dead predecessor.
//
// KEYS[1] -> homeindex:lock; ARGV[1] -> the predecessor's token; ARGV[2] -> our token;
// ARGV[3] -> TTL in ms
//
// Returns: 1 taken (it held the predecessor's token); 0 otherwise (nothing done).
var takeOverLockScript = newScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', tonumber(ARGV[3]))
return 1
`)

// TakeOverLock gives owner the lock if it is held by prev, a predecessor the caller knows to
// be dead (a previous process of the same installation), so a restart after a crash resumes
// at once instead of waiting out the TTL. It reports whether the lock was taken.
func (c *Client) TakeOverLock(ctx context.Context, prev, owner string, ttl time.Duration) (bool, error) {
	if prev == "" {
		return false, nil
	}
	n, err := takeOverLockScript.Run(ctx, c.rdb, []string{protocol.LockKey}, prev, owner, ttl.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("take over daemon lock: %w", err)
	}
	return n == lockDone, nil
}

// releaseLockScript releases the daemon lock if the caller holds it (compare-and-delete).
//
// KEYS[1] -> homeindex:lock; ARGV[1] -> owner token
//
// Returns: 1 released; 0 not held by the caller (nothing done).
var releaseLockScript = newScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`)

// AcquireLock tries once to become the active daemon: true if owner now holds the lock for
// ttl (re-acquiring is allowed and extends it). Use a unique owner per process.
func (c *Client) AcquireLock(ctx context.Context, owner string, ttl time.Duration) (bool, error) {
	n, err := acquireLockScript.Run(ctx, c.rdb, []string{protocol.LockKey}, owner, ttl.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("acquire daemon lock: %w", err)
	}
	return n == lockDone, nil
}

// RenewLock extends owner's lock to ttl; call it every ttl/3 or so. If the key vanished (Redis
// restarted or was flushed) it is taken again. It returns ErrLockLost when another daemon holds
// the lock: the caller must stop acting as the active daemon at once.
func (c *Client) RenewLock(ctx context.Context, owner string, ttl time.Duration) error {
	ok, err := c.AcquireLock(ctx, owner, ttl)
	if err != nil {
		return fmt.Errorf("renew: %w", err)
	}
	if !ok {
		return ErrLockLost
	}
	return nil
}

// ReleaseLock gives the lock up if owner holds it, so a standby takes over without waiting for
// the TTL.
func (c *Client) ReleaseLock(ctx context.Context, owner string) error {
	if err := releaseLockScript.Run(ctx, c.rdb, []string{protocol.LockKey}, owner).Err(); err != nil {
		return fmt.Errorf("release daemon lock: %w", err)
	}
	return nil
}

// LockHolder returns the current owner of the daemon lock and its remaining TTL; "" when free.
func (c *Client) LockHolder(ctx context.Context) (string, time.Duration, error) {
	pipe := c.rdb.Pipeline()
	get := pipe.Get(ctx, protocol.LockKey)
	ttl := pipe.PTTL(ctx, protocol.LockKey)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return "", 0, fmt.Errorf("read daemon lock: %w", err)
	}
	owner, _ := get.Result()
	return owner, max(ttl.Val(), 0), nil
}

// WaitLock blocks until owner holds the lock (standby mode), trying every poll (default
// ttl/3), and returns ctx's error if ctx ends first. Redis errors are logged once per outage
// and retried: a standby outlives Redis outages.
func (c *Client) WaitLock(ctx context.Context, owner string, ttl, poll time.Duration) error {
	if poll <= 0 {
		poll = max(ttl/3, 10*time.Millisecond)
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	announced, failing := false, false
	for {
		ok, err := c.AcquireLock(ctx, owner, ttl)
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			if !failing {
				c.log.Warn().Err(err).Msg("standby: cannot reach redis to take the daemon lock; retrying")
			}
			failing = true
		case ok:
			if announced {
				c.log.Info().Str("owner", owner).Msg("daemon lock acquired: taking over as the active daemon")
			}
			return nil
		default:
			failing = false
			if !announced {
				holder, left, _ := c.LockHolder(ctx)
				c.log.Info().Str("holder", holder).Dur("ttl", left).Msg("another daemon is active on this redis; waiting as standby")
				announced = true
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// ensureEpochScript reads the epoch, writing a new one if Redis has none.
//
// KEYS[1] -> homeindex:epoch  STRING
// ARGV[1] -> a new random epoch, used only if the key is missing
//
// Returns: {epoch, 1 if it was just written else 0}.
var ensureEpochScript = newScript(`
local cur = redis.call('GET', KEYS[1])
if cur then return {cur, 0} end
redis.call('SET', KEYS[1], ARGV[1])
return {ARGV[1], 1}
`)

// Epoch returns the data set's epoch: a random value written the first time any daemon asks.
// created is true when this call wrote it, i.e. Redis had no epoch: it is new, was flushed,
// or lost its data. The daemon keeps the epoch it dispatched under (in the catalog); when
// Epoch returns another value, every job the catalog has in flight must be dispatched again.
func (c *Client) Epoch(ctx context.Context) (epoch string, created bool, err error) {
	v, err := ensureEpochScript.Run(ctx, c.rdb, []string{protocol.EpochKey}, protocol.NewToken()).Slice()
	if err != nil {
		return "", false, fmt.Errorf("read redis epoch: %w", err)
	}
	if len(v) != 2 {
		return "", false, unexpected("epoch", v)
	}
	epoch, _ = v[0].(string)
	n, _ := v[1].(int64)
	return epoch, n == 1, nil
}
