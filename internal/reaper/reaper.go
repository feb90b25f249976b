// Package reaper recovers jobs whose worker went away: every REAP_INTERVAL one pass of the
// queue's reaper scripts requeues expired jobs (by the Redis clock, only if still in their
// processing list), promotes retries whose backoff ended and parks jobs that used up their
// attempts; a slower sweep finds items that never got a deadline. Parked jobs are recorded in
// the catalog, where the document moves on down the chain with the failure noted.
package reaper

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/queue"
)

// Defaults for Config fields left zero.
const (
	DefaultInterval   = time.Second      // REAP_INTERVAL
	DefaultSweepEvery = 30 * time.Second // sweep for items without a deadline
	DefaultGrace      = time.Minute      // before such an item counts as lost
)

// Config tunes the reaper. Zero durations take the defaults above.
type Config struct {
	Modules  []queue.Module
	Pipeline []string // module names in order, to move parked documents on
	Policy   queue.RetryPolicy
	Interval time.Duration // REAP_INTERVAL
	// SweepEvery is how often processing lists are swept for items without a deadline, and
	// Grace how long such an item may stay before it counts as lost.
	SweepEvery, Grace time.Duration
	// OnChange, when set, is called after a pass that parked or dropped jobs (the dispatcher
	// refills).
	OnChange func()
}

// Reaper runs the passes.
type Reaper struct {
	cfg Config
	q   *queue.Client
	cat *catalog.Catalog
	log zerolog.Logger
	now func() time.Time

	mu    sync.Mutex
	stats Stats
}

// Stats counts what the reaper did.
type Stats struct {
	Passes, Requeued, Retrying, Promoted, Parked, Dropped, Orphans int64
}

// New builds a Reaper.
func New(cfg Config, q *queue.Client, cat *catalog.Catalog, log zerolog.Logger) *Reaper {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.SweepEvery <= 0 {
		cfg.SweepEvery = DefaultSweepEvery
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	return &Reaper{cfg: cfg, q: q, cat: cat, log: log, now: time.Now}
}

// Stats returns the counters so far.
func (r *Reaper) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Run reaps every Interval until ctx ends. Errors are logged; the next pass retries.
func (r *Reaper) Run(ctx context.Context) error {
	tick := time.NewTicker(r.cfg.Interval)
	defer tick.Stop()
	lastSweep := r.now()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		err := r.Pass(ctx)
		if err == nil && r.now().Sub(lastSweep) >= r.cfg.SweepEvery {
			err = r.Sweep(ctx)
			lastSweep = r.now()
		}
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			r.log.Warn().Err(err).Msg("reaper pass failed; retrying every interval")
			failing = true
		case err == nil && failing:
			r.log.Info().Msg("reaper passes work again")
			failing = false
		}
	}
}

// Pass runs one reaper pass and records parked jobs in the catalog.
func (r *Reaper) Pass(ctx context.Context) error {
	res, err := r.q.Reap(ctx, queue.ReapOptions{Modules: r.cfg.Modules, Policy: r.cfg.Policy})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.stats.Passes++
	r.stats.Requeued += int64(res.Requeued)
	r.stats.Retrying += int64(res.Retrying)
	r.stats.Promoted += int64(res.Promoted)
	r.mu.Unlock()
	return r.record(ctx, res.Parked, res.Dropped)
}

// Sweep looks for processing items without a deadline and jobs lost in a worker's hands.
func (r *Reaper) Sweep(ctx context.Context) error {
	for _, m := range r.cfg.Modules {
		res, err := r.q.SweepOrphans(ctx, m, r.cfg.Grace, r.cfg.Policy)
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.stats.Orphans += int64(res.Requeued + res.Retrying + len(res.Parked))
		r.mu.Unlock()
		if err := r.record(ctx, res.Parked, res.Dropped); err != nil {
			return err
		}
	}
	return nil
}

// record writes parked jobs to the catalog (the document records the failure and moves on) and
// forgets dropped ones there (the dispatcher sends them again if they are still due).
func (r *Reaper) record(ctx context.Context, parked []queue.Parked, dropped []queue.Dropped) error {
	for _, p := range parked {
		ok, err := r.cat.Park(ctx, p.ID, p.Module, p.Token, p.Attempts, p.Reason, r.cfg.Pipeline, r.now())
		if err != nil {
			return err
		}
		r.log.Warn().Str("module", p.Module).Str("id", p.ID).Int("attempts", p.Attempts).Str("reason", p.Reason).
			Bool("recorded", ok).Msg("job parked after its last attempt")
	}
	if len(dropped) > 0 {
		err := r.cat.Update(ctx, func(t *catalog.Tx) error {
			for _, d := range dropped {
				if d.ID == "" {
					continue
				}
				j, ok, err := t.Job(ctx, d.ID, d.Module)
				if err != nil {
					return err
				}
				if ok && j.State == catalog.JobQueued {
					if err := t.DeleteJob(ctx, d.ID, d.Module); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, d := range dropped {
			r.log.Info().Str("module", d.Module).Str("id", d.ID).Str("reason", d.Reason).Msg("queue item dropped")
		}
	}
	r.mu.Lock()
	r.stats.Parked += int64(len(parked))
	r.stats.Dropped += int64(len(dropped))
	r.mu.Unlock()
	if (len(parked) > 0 || len(dropped) > 0) && r.cfg.OnChange != nil {
		r.cfg.OnChange()
	}
	return nil
}
