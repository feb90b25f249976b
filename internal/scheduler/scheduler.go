// Package scheduler decides when work happens: a start-up sync, then one sync per cron tick,
// plus early syncs asked for by file-system events. Never two syncs at once: a tick that fires
// while a sync runs is skipped and logged.
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
	// MinEarlyGap is the least time between the end of a sync and an early (event) sync, so a
	// burst of file events costs one walk, not one per event.
	MinEarlyGap time.Duration

	mu      sync.Mutex
	running bool
	skipped int
	lastEnd time.Time
}

// New builds a Scheduler.
func New(schedule cron.Schedule, fn SyncFunc, log zerolog.Logger) *Scheduler {
	return &Scheduler{schedule: schedule, sync: fn, log: log, now: time.Now,
		trigger: make(chan string, 1), MinEarlyGap: 30 * time.Second}
}

// Trigger asks for an early sync. Requests that arrive while one is pending coalesce.
func (s *Scheduler) Trigger(reason string) {
	select {
	case s.trigger <- reason:
	default:
	}
}

// Skipped returns how many ticks were skipped because a sync was running.
func (s *Scheduler) Skipped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skipped
}

// Run does the start-up sync, then waits for ticks and triggers until ctx ends, then waits for a
// running sync to return.
func (s *Scheduler) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	done := make(chan struct{}, 1)
	start := func(reason string) {
		s.mu.Lock()
		if s.running {
			s.skipped++
			s.mu.Unlock()
			s.log.Info().Str("reason", reason).Msg("sync already running; this one is skipped")
			return
		}
		s.running = true
		s.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.sync(ctx, reason); err != nil && ctx.Err() == nil {
				s.log.Error().Err(err).Str("reason", reason).Msg("sync failed")
			}
			s.mu.Lock()
			s.running = false
			s.lastEnd = s.now()
			s.mu.Unlock()
			select {
			case done <- struct{}{}:
			default:
			}
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
			return nil
		case <-tick.C:
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
			start(earlyReason)
		case <-done:
			tick.Stop()
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
