package sdk

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// idleWaitSeconds bounds one blocking wait on an empty list; an idle worker looks at its
// queues at least this often.
const idleWaitSeconds = "1"

// listWaiter wakes an idle worker when a list may have items, without taking any: it blocks
// in BLMOVE key key LEFT LEFT, which returns the head once the list is not empty and leaves
// the list as it was (a rotation of the head onto itself). The item is then claimed by
// claimScript like any other, so it is in a list at every instant. Each wait runs on its own
// connection in its own goroutine, so the worker can watch both of its queues at once.
type listWaiter struct {
	rdb   *redis.Client
	key   string
	arm   chan struct{} // a request for one wait
	ready chan struct{} // the list may have items (or the wait timed out)
}

func newListWaiter(rdb *redis.Client, key string) *listWaiter {
	return &listWaiter{rdb: rdb, key: key, arm: make(chan struct{}, 1), ready: make(chan struct{}, 1)}
}

// request asks for one wait; it never blocks. Each request yields at most one ready signal, so
// a worker cannot spin on stale signals.
func (lw *listWaiter) request() {
	select {
	case lw.arm <- struct{}{}:
	default:
	}
}

// run serves requests until ctx ends (closing the client ends a wait in progress).
func (lw *listWaiter) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-lw.arm:
		}
		// Errors (Redis down) and timeouts both wake the worker: its next command tells.
		_ = lw.rdb.Do(ctx, "BLMOVE", lw.key, lw.key, "LEFT", "LEFT", idleWaitSeconds).Err()
		if ctx.Err() != nil {
			return
		}
		select {
		case lw.ready <- struct{}{}:
		default:
		}
	}
}

type waitKind int

const (
	waitIdle  waitKind = iota // no work: wake on an item in :check or :run
	waitToken                 // run work waits for share tokens: wake on :check or after a poll
)

// wait blocks until work may be there, or ctx ends.
func (w *Worker) wait(ctx context.Context, kind waitKind) {
	w.waitCheck.request()
	var poll <-chan time.Time
	if kind == waitToken {
		t := time.NewTimer(w.shares.poll)
		defer t.Stop()
		poll = t.C
	} else {
		w.waitRun.request() // :run is not empty while waiting for a token: no request then
	}
	select {
	case <-ctx.Done():
	case <-w.waitCheck.ready:
	case <-w.waitRun.ready:
	case <-poll:
	}
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// backoff grows the pause after a Redis error from 100 ms to 2 s: capped low enough that a
// worker takes jobs again within 2 s of Redis returning (reliability matrix R3: work resumes
// within 5 s), while a refused connection every 2 s costs next to no CPU.
type backoff struct{ d time.Duration }

func (b *backoff) next() time.Duration {
	b.d = min(max(2*b.d, 100*time.Millisecond), 2*time.Second)
	return b.d
}

func (b *backoff) reset() { b.d = 0 }

// redisHealth logs an outage once when it starts and once when it ends, not per failed command.
type redisHealth struct{ down atomic.Bool }

func (h *redisHealth) failed(log zerolog.Logger, err error) {
	if !h.down.Swap(true) {
		log.Warn().Err(err).Msg("redis unavailable: retrying")
	}
}

func (h *redisHealth) ok(log zerolog.Logger) {
	if h.down.Swap(false) {
		log.Info().Msg("redis reachable again")
	}
}
