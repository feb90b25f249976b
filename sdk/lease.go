package sdk

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// lease is an item this worker holds: in <queue>:processing with a deadline in timeouts.
type lease struct {
	queue    string // <m>:check or <m>:run
	item     string // the exact string, the item's identity on the wire
	deadline time.Time
}

func (l lease) phase() protocol.Phase {
	_, p, _ := protocol.ParseQueueKey(l.queue)
	return p
}

func (l lease) member() string { return protocol.TimeoutMember(l.queue, l.item) }

type claimStatus int

const (
	claimed claimStatus = iota
	claimEmpty
	claimNotHolder // run phase: this worker no longer heads every share group
)

// claim takes the next item (claimScript): a check, else a run when mayRun. The local
// deadline starts before the script runs, so it never falls after the one Redis records.
func (w *Worker) claim(ctx context.Context, mayRun bool) (lease, claimStatus, error) {
	start := time.Now()
	v, err := claimScript.Run(ctx, w.rdb, w.claimKeys, w.timeout, runFlag(mayRun), w.cfg.WorkerID, w.directMarker).Result()
	if errors.Is(err, redis.Nil) {
		return lease{}, claimEmpty, nil
	}
	if err != nil {
		return lease{}, 0, fmt.Errorf("claim an item: %w", err)
	}
	if v, ok := v.(int64); ok && v == claimShareWait && w.shares != nil {
		return lease{}, claimNotHolder, nil
	}
	if l, ok := w.claimed(v, start); ok {
		return l, claimed, nil
	}
	return lease{}, 0, fmt.Errorf("claim an item: unexpected reply %v", v)
}

// claimed reads a {queue, item} reply of claimScript or finishClaimScript, sent at start.
func (w *Worker) claimed(v any, start time.Time) (lease, bool) {
	if v, ok := v.([]any); ok && len(v) == 2 {
		q, _ := v[0].(string)
		item, ok := v[1].(string)
		if ok && (q == w.keys.check || q == w.keys.run) {
			return lease{queue: q, item: item, deadline: start.Add(w.cfg.Timeout)}, true
		}
	}
	return lease{}, false
}

func runFlag(mayRun bool) string {
	if mayRun {
		return "1"
	}
	return "0"
}

// nextItem is the item step works on: the one the last finish took (finishClaimScript), or a
// claim's.
func (w *Worker) nextItem(ctx context.Context, mayRun bool) (lease, claimStatus, error) {
	if l := w.next; l != nil {
		w.next = nil
		return *l, claimed, nil
	}
	return w.claim(ctx, mayRun)
}

// handBackNext returns the item the last finish took, if step has not started it (Serve is
// stopping).
func (w *Worker) handBackNext() {
	if l := w.next; l != nil {
		w.next = nil
		if err := w.handBack(*l, w.log); err != nil {
			w.log.Warn().Err(err).Msg("could not hand the next item back: the reaper offers it again after its deadline")
		}
	}
}

// redisCtx is for the commands that end a held item: they must run even while Serve stops.
func (w *Worker) redisCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 10*time.Second)
}

// finish ends a held item by pushing payload to dest (finishScript) and logs what happened.
// While Serve goes on, the same script takes this worker's next item (finishClaimScript) for
// the next step: one round trip per item, not a finish and a claim.
func (w *Worker) finish(l lease, log zerolog.Logger, dest, payload string) (bool, error) {
	ctx, cancel := w.redisCtx()
	defer cancel()
	keys := make([]string, 3, 3+len(w.claimKeys))
	keys[0], keys[1], keys[2] = protocol.TimeoutsKey, protocol.ProcessingKey(l.queue), dest
	what := "finish " + string(l.phase()) + " item"
	if w.next != nil || w.serveCtx == nil || w.serveCtx.Err() != nil {
		n, err := finishScript.Run(ctx, w.rdb, keys, l.member(), l.item, payload).Int64()
		if err != nil {
			return false, fmt.Errorf("%s: %w", what, err)
		}
		return heldOutcome(log, n, what)
	}
	keys = append(keys, w.claimKeys...)
	start := time.Now()
	v, err := finishClaimScript.Run(ctx, w.rdb, keys, l.member(), l.item, payload,
		w.timeout, runFlag(w.mayRun()), w.cfg.WorkerID, w.directMarker).Result()
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	if n, ok := v.(int64); ok {
		return heldOutcome(log, n, what)
	}
	next, ok := w.claimed(v, start)
	if !ok {
		return false, fmt.Errorf("%s: unexpected reply %v", what, v)
	}
	w.next = &next
	return true, nil
}

// heldOutcome reads a script's answer about a held item (heldDone, heldGone, heldExpired),
// logging an outcome that was dropped.
func heldOutcome(log zerolog.Logger, n int64, what string) (bool, error) {
	switch n {
	case heldDone:
		return true, nil
	case heldGone:
		log.Warn().Msg("the item is no longer held (reaped, or an identical item finished first): outcome dropped")
	case heldExpired:
		log.Warn().Msg("the deadline passed before the outcome was sent: outcome dropped, the reaper retries the item")
	default:
		return false, fmt.Errorf("%s: unexpected reply %d", what, n)
	}
	return false, nil
}

// fail reports a failed attempt with its reason.
func (w *Worker) fail(l lease, job *Job, cause error) error {
	_, err := w.finish(l, job.Log, protocol.DoneKey, failureMessage(w.cfg.Module, job.echo, cause))
	return err
}

// setAside keeps an item this worker must not process in its processing list, with a deadline
// UIDRetry away: the items behind it go on, and the reaper offers it again later.
func (w *Worker) setAside(l lease, log zerolog.Logger, msg string, cause error) error {
	log.Warn().Err(cause).Dur("retry_in", w.cfg.UIDRetry).Msg(msg)
	ctx, cancel := w.redisCtx()
	defer cancel()
	if err := setAsideScript.Run(ctx, w.rdb, []string{protocol.TimeoutsKey}, l.member(), seconds(w.cfg.UIDRetry)).Err(); err != nil {
		return fmt.Errorf("set item aside: %w", err)
	}
	return nil
}

// handBack returns an unfinished item to the head of its queue (shutdown).
func (w *Worker) handBack(l lease, log zerolog.Logger) error {
	ctx, cancel := w.redisCtx()
	defer cancel()
	n, err := handBackScript.Run(ctx, w.rdb, []string{protocol.TimeoutsKey, protocol.ProcessingKey(l.queue), l.queue},
		l.member(), l.item).Int64()
	if err != nil {
		return fmt.Errorf("hand item back: %w", err)
	}
	if n == heldDone {
		log.Info().Msg("shutting down: item handed back to the head of its queue")
	} else {
		log.Warn().Int64("reply", n).Msg("shutting down: item no longer held or past its deadline: left for the reaper")
	}
	return nil
}
