package merge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/internal/supervise"
)

// maxHandleFailures is how many times in a row Handle may fail on one payload before Run
// quarantines it, so one result that cannot be merged never stalls the others.
const maxHandleFailures = 10

// finishTimeout bounds handling the results already taken once the merger is asked to stop.
const finishTimeout = 5 * time.Second

// Run puts results left in modules:done:processing back in front (RestoreDone: a previous run
// died before acknowledging them, or a take's reply was lost), at start and whenever it is
// idle, and consumes modules:done until ctx ends. When Redis or the catalog fails it logs once
// per outage, waits with a capped exponential backoff (never a busy loop), restores again (a
// failed take's reply or Handle may have left a result behind) and retries, so nothing is
// skipped; a payload Handle failed on maxHandleFailures times in a row is quarantined with the
// last error. It returns nil when ctx ends.
func (m *Merger) Run(ctx context.Context) error {
	restore := true
	batch := m.cfg.Batch
	var o outage
	var stuck struct {
		raw   string
		tries int
	}
	for ctx.Err() == nil {
		raw, err := m.step(ctx, &restore, batch)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && raw != "" {
			if raw != stuck.raw {
				stuck.raw, stuck.tries = raw, 0
			}
			if stuck.tries++; stuck.tries >= maxHandleFailures {
				reason := fmt.Sprintf("could not be handled after %d tries: %v", stuck.tries, err)
				if qerr := m.quarantine(ctx, raw, nil, reason); qerr == nil {
					err = nil
				}
			}
		}
		if err == nil {
			stuck.raw, stuck.tries = "", 0
			o.end(m)
			batch = m.cfg.Batch
			continue
		}
		// One result at a time until one succeeds, so a result that cannot be handled is
		// found and, after maxHandleFailures tries, quarantined alone.
		restore, batch = true, 1
		m.retries.Add(1)
		wait := o.fail(m, err)
		if !supervise.Sleep(ctx, wait) {
			return nil
		}
	}
	return nil
}

// step restores leftovers when asked, then takes and handles up to batch results (or none:
// nothing came in time). It returns the result when handling a batch of one failed. Called only
// between batches, when nothing else is being handled, as RestoreDone requires.
func (m *Merger) step(ctx context.Context, restore *bool, batch int) (failed string, err error) {
	if *restore {
		n, err := m.q.RestoreDone(ctx)
		if err != nil {
			return "", err
		}
		*restore = false
		if n > 0 {
			m.log.Info().Int("results", n).Msg("unacknowledged results put back for replay")
		}
	}
	taken, err := m.q.NextDones(ctx, m.cfg.Block, batch, m.cfg.MaxPayload)
	for _, reason := range taken.Oversized {
		m.stats.quarantined.Add(1)
		m.log.Warn().Str("reason", reason).Msg("result quarantined")
	}
	if errors.Is(err, queue.ErrNoDone) {
		// Idle, so anything in modules:done:processing is a leftover (a take that Redis ran
		// but whose reply never came): put it back before the next take. One script call
		// per idle Block.
		*restore = true
		return "", nil
	}
	if err != nil {
		return "", err
	}
	raws := taken.Results
	if len(raws) == 0 {
		return "", nil
	}
	// Results taken are handled to the end even when ctx ends meanwhile (SIGTERM): a shutdown
	// leaves nothing in modules:done:processing. Bounded, so a stuck catalog cannot hold it up.
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if err := m.HandleBatch(hctx, raws); err != nil {
		if len(raws) == 1 {
			return raws[0], err
		}
		return "", err
	}
	if len(raws) < batch {
		supervise.Sleep(ctx, m.cfg.Gather) // let the next batch gather
	}
	return "", nil
}

// outage tracks consecutive failures of Run: one log line when it starts, one when it ends.
type outage struct {
	failures int
	since    time.Time
}

// fail records a failure and returns how long to wait before the next try.
func (o *outage) fail(m *Merger, err error) time.Duration {
	if o.failures == 0 {
		o.since = time.Now()
		m.log.Error().Err(err).Msg("merger stalled (redis or catalog unavailable); retrying with backoff")
	}
	o.failures++
	wait := m.backoffMin
	for i := 1; i < o.failures && wait < m.backoffMax; i++ {
		wait *= 2
	}
	return min(wait, m.backoffMax)
}

// end records a success, logging the end of an outage.
func (o *outage) end(m *Merger) {
	if o.failures == 0 {
		return
	}
	m.log.Info().Int("retries", o.failures).Dur("after", time.Since(o.since)).Msg("merger resumed")
	o.failures = 0
}
