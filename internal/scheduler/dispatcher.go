package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/protocol"
)

// Module is a configured module as the dispatcher sees it.
type Module struct {
	Name   string
	UID    string
	Window int // jobs kept in Redis: :check + :check:processing + :run + :run:processing
}

// Dispatcher keeps each module's window of jobs in Redis full, in tier order: documents with a
// path on a present drive (tier A) before the others, by path within a tier. It withdraws
// not-started jobs whose drive went away, and, when a drive appears, the not-started tier-B jobs,
// so the drive's jobs go before every job not yet started. A refill costs O(window).
type Dispatcher struct {
	cat     *catalog.Catalog
	q       *queue.Client
	modules []Module
	log     zerolog.Logger
	now     func() time.Time
	wake    chan struct{}
	// Interval is the idle refill period (windows also refill on Wake).
	Interval time.Duration

	mu          sync.Mutex
	preempt     bool // a drive appeared: put its jobs before not-started tier-B jobs
	dispatched  int64
	withdrawn   int64
	lastRefills map[string]time.Time
}

// NewDispatcher builds a Dispatcher.
func NewDispatcher(cat *catalog.Catalog, q *queue.Client, modules []Module, log zerolog.Logger) *Dispatcher {
	return &Dispatcher{cat: cat, q: q, modules: modules, log: log, now: time.Now,
		wake: make(chan struct{}, 1), Interval: time.Second, lastRefills: map[string]time.Time{}}
}

// Wake asks for a refill now (a job finished, a sync added work).
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// DriveAppeared makes the next refill put tier-A jobs before not-started tier-B ones.
func (d *Dispatcher) DriveAppeared() {
	d.mu.Lock()
	d.preempt = true
	d.mu.Unlock()
	d.Wake()
}

// Counts returns how many jobs were dispatched and withdrawn so far.
func (d *Dispatcher) Counts() (dispatched, withdrawn int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dispatched, d.withdrawn
}

// Run refills on every Wake and Interval until ctx ends. Redis errors are logged and retried
// with a capped backoff.
func (d *Dispatcher) Run(ctx context.Context) error {
	backoff := time.Duration(0)
	for {
		err := d.RefillAll(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			backoff = min(max(2*backoff, 100*time.Millisecond), 5*time.Second)
			d.log.Warn().Err(err).Dur("retry_in", backoff).Msg("dispatch failed")
		default:
			backoff = 0
		}
		wait := d.Interval
		if backoff > 0 {
			wait = backoff
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-d.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// RefillAll refills every module's window once.
func (d *Dispatcher) RefillAll(ctx context.Context) error {
	d.mu.Lock()
	preempt := d.preempt
	d.preempt = false
	d.mu.Unlock()
	for _, m := range d.modules {
		if err := d.refill(ctx, m, preempt); err != nil {
			if preempt {
				d.DriveAppeared() // try the preemption again next time
			}
			return fmt.Errorf("module %s: %w", m.Name, err)
		}
	}
	return nil
}

func (d *Dispatcher) refill(ctx context.Context, m Module, preempt bool) error {
	stranded, err := d.cat.StrandedJobs(ctx, m.Name)
	if err != nil {
		return err
	}
	if preempt {
		tierB, err := d.cat.QueuedTierB(ctx, m.Name)
		if err != nil {
			return err
		}
		stranded = append(stranded, tierB...)
	}
	if err := d.withdraw(ctx, m, stranded); err != nil {
		return err
	}
	inFlight, err := d.q.InFlight(ctx, m.Name)
	if err != nil {
		return err
	}
	room := m.Window - int(inFlight)
	if room <= 0 {
		return nil
	}
	cands, err := d.cat.Candidates(ctx, m.Name, room)
	if err != nil || len(cands) == 0 {
		return err
	}
	return d.push(ctx, m, cands)
}

// withdraw takes not-started jobs back out of Redis and forgets them in the catalog; jobs that
// already started stay (their result is merged or goes stale).
func (d *Dispatcher) withdraw(ctx context.Context, m Module, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	gone, err := d.q.Withdraw(ctx, m.Name, ids)
	if err != nil {
		return err
	}
	if len(gone) == 0 {
		return nil
	}
	err = d.cat.Update(ctx, func(t *catalog.Tx) error {
		for _, id := range gone {
			if err := t.DeleteJob(ctx, id, m.Name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.withdrawn += int64(len(gone))
	d.mu.Unlock()
	d.log.Debug().Str("module", m.Name).Int("jobs", len(gone)).Msg("withdrew jobs not started")
	return nil
}

// push sends candidates to the module's queue and records their job rows. Redis first: a crash
// before the catalog commit leaves items whose ids Push reports as skipped next time, and their
// tokens are then read back from Redis, so no job is ever queued twice or forgotten.
func (d *Dispatcher) push(ctx context.Context, m Module, cands []catalog.Candidate) error {
	now := d.now()
	items := make([]queue.Item, 0, len(cands))
	for _, c := range cands {
		doc, ok, err := d.cat.ItemDocument(ctx, c.ID)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		b, err := json.Marshal(doc)
		if err != nil {
			return fmt.Errorf("render %s: %w", c.ID, err)
		}
		items = append(items, queue.Item{ID: c.ID, Document: b, UID: m.UID, Token: protocol.NewToken(), Attempt: 1, Since: now})
	}
	res, err := d.q.Push(ctx, m.Name, items, false)
	if err != nil {
		return err
	}
	skipped := map[string]bool{}
	for _, id := range res.Skipped {
		skipped[id] = true
	}
	jobs := make([]catalog.Job, 0, len(items))
	for _, it := range items {
		j := catalog.Job{DocID: it.ID, Module: m.Name, Token: it.Token, Attempt: 1, State: catalog.JobQueued, Since: now, Updated: now}
		if skipped[it.ID] {
			raw, ok, err := d.q.JobItem(ctx, m.Name, it.ID)
			if err != nil {
				return err
			}
			if !ok {
				continue // finished meanwhile: the next refill sees it again if still due
			}
			info, err := protocol.ParseItem(raw)
			if err != nil || !info.HasJob {
				continue
			}
			j.Token, j.Attempt = info.Job.Token, info.Job.Attempt
		}
		jobs = append(jobs, j)
	}
	err = d.cat.Update(ctx, func(t *catalog.Tx) error {
		for _, j := range jobs {
			if err := t.PutJob(ctx, j); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.dispatched += int64(res.Pushed)
	d.mu.Unlock()
	if res.Pushed > 0 {
		d.log.Debug().Str("module", m.Name).Int("jobs", res.Pushed).Msg("dispatched")
	}
	return nil
}
