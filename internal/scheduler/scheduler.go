// Package scheduler decides when work happens: a start-up sync, then one sync per cron tick,
// plus early syncs asked for by the change watcher and by requests (POST /api/sync). Never two
// syncs at once: a tick that fires while a sync runs is skipped and logged; a change or request
// that comes while a sync runs starts another one right after it.
package scheduler

import (
	"context"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/rs/zerolog"
)

// SyncFunc runs one sync.
type SyncFunc func(ctx context.Context, reason string) error

// Scheduler runs syncs on a cron schedule.
type Scheduler struct {
	schedule cron.Schedule
	sync     SyncFunc
	log      zerolog.Logger
	now      func() time.Time
	trigger  chan string
	requests chan request
	// MinEarlyGap is the least time between the end of a sync and an early (event) sync. The
	// watcher coalesces bursts already; this only keeps a tree that never settles from
	// syncing back to back.
	MinEarlyGap time.Duration

	mu      sync.Mutex
	running bool
	skipped int
	lastEnd time.Time
}

// request is a sync asked for with Request: done gets the error of the first sync that
// starts after it.
type request struct {
	reason string
	done   chan error
}

// New builds a Scheduler.
func New(schedule cron.Schedule, fn SyncFunc, log zerolog.Logger) *Scheduler {
	return &Scheduler{schedule: schedule, sync: fn, log: log, now: time.Now,
		trigger: make(chan string, 1), requests: make(chan request), MinEarlyGap: 2 * time.Second}
}

// Trigger asks for an early sync. Requests that arrive while one is pending coalesce; one that
// arrives while a sync runs starts another sync after it (the running walk may have passed
// the change already).
func (s *Scheduler) Trigger(reason string) {
	select {
	case s.trigger <- reason:
	default:
	}
}

// TriggerAfter asks for an early sync in d (a follow-up for files still being written).
func (s *Scheduler) TriggerAfter(d time.Duration, reason string) {
	time.AfterFunc(d, func() { s.Trigger(reason) })
}

// Request runs a sync now (after the running one, if any) and waits for it; it returns the
// sync's error, or ctx's when ctx ends first.
func (s *Scheduler) Request(ctx context.Context, reason string) error {
	r := request{reason: reason, done: make(chan error, 1)}
	select {
	case s.requests <- r:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Skipped returns how many ticks were skipped because a sync was running.
func (s *Scheduler) Skipped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skipped
}

// Running says whether a sync runs now.
func (s *Scheduler) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// Run does the start-up sync, then waits for ticks, triggers and requests until ctx ends, then
// waits for a running sync to return.
func (s *Scheduler) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	done := make(chan struct{}, 1)
	running := false
	pending := ""            // an early sync or request that came while a sync ran
	var waiters []chan error // requests the next sync answers
	start := func(reason string) {
		running = true
		s.mu.Lock()
		s.running = true
		s.mu.Unlock()
		answer := waiters
		waiters = nil
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.sync(ctx, reason)
			if err != nil && ctx.Err() == nil {
				s.log.Error().Err(err).Str("reason", reason).Msg("sync failed")
			}
			s.mu.Lock()
			s.running = false
			s.lastEnd = s.now()
			s.mu.Unlock()
			for _, w := range answer {
				w <- err
			}
			done <- struct{}{}
		}()
	}
	start("startup")
	var early <-chan time.Time
	earlyReason := ""
	for {
		next := s.schedule.Next(s.now())
		tick := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			tick.Stop()
			for _, w := range waiters {
				w <- ctx.Err()
			}
			return nil
		case <-tick.C:
			if running {
				s.mu.Lock()
				s.skipped++
				s.mu.Unlock()
				s.log.Info().Str("reason", "cron").Msg("sync already running; this one is skipped")
				continue
			}
			start("cron")
		case r := <-s.trigger:
			tick.Stop()
			if early == nil {
				earlyReason = r
				early = time.After(s.earlyDelay())
			}
		case <-early:
			tick.Stop()
			early = nil
			if running {
				pending = earlyReason
				continue
			}
			start(earlyReason)
		case r := <-s.requests:
			tick.Stop()
			waiters = append(waiters, r.done)
			if running {
				pending = r.reason
				continue
			}
			start(r.reason)
		case <-done:
			tick.Stop()
			running = false
			if pending != "" {
				r := pending
				pending = ""
				start(r)
			}
		}
	}
}

// earlyDelay is how long an early sync waits so that it starts MinEarlyGap after the last one.
func (s *Scheduler) earlyDelay() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastEnd.IsZero() {
		return 0
	}
	return max(0, s.MinEarlyGap-s.now().Sub(s.lastEnd))
}
