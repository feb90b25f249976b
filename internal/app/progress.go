package app

import (
	"context"
	"sync"
	"time"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/filesync"
)

// ProgressEvery is how often a running sync logs a progress line.
const ProgressEvery = 10 * time.Second

// syncState keeps the last sync and the sync count for status and metrics.
type syncState struct {
	mu     sync.Mutex
	last   *filesync.SyncRecord
	loaded bool
	count  int64 // syncs finished since start
	failed int64 // of which ended with an error
}

// LastSync returns the last finished sync (this run's, or the one persisted by an earlier
// run), and how many syncs finished and failed since start.
func (a *App) LastSync(ctx context.Context) (last *filesync.SyncRecord, count, failed int64) {
	s := &a.syncs
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded {
		var r filesync.SyncRecord
		if ok, err := a.Catalog.MetaJSON(ctx, catalog.MetaLastSync, &r); err == nil {
			s.loaded = true
			if ok && s.last == nil {
				s.last = &r
			}
		}
	}
	return s.last, s.count, s.failed
}

// SyncProgress returns the running sync's counters.
func (a *App) SyncProgress() filesync.Progress { return a.Syncer.Progress() }

// recordSync keeps and persists a finished sync's summary.
func (a *App) recordSync(ctx context.Context, reason string, st filesync.Stats, err error) {
	r := &filesync.SyncRecord{Reason: reason, Started: st.Started.UTC(), Finished: st.Started.Add(st.Duration).UTC(),
		DurationSeconds: st.Duration.Seconds(), Stats: st}
	if err != nil {
		r.Error = err.Error()
	}
	s := &a.syncs
	s.mu.Lock()
	s.last, s.loaded = r, true
	s.count++
	if err != nil {
		s.failed++
	}
	s.mu.Unlock()
	if perr := a.Catalog.SetMetaJSON(context.WithoutCancel(ctx), catalog.MetaLastSync, r); perr != nil {
		a.Log.Warn().Err(perr).Msg("last sync summary not persisted")
	}
}

// logProgress logs a progress line every ProgressEvery while a sync runs, until stop.
func (a *App) logProgress(every time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				p := a.Syncer.Progress()
				if !p.Running {
					continue
				}
				ev := a.Log.Info().Int64("walked", p.Walked).Bool("walk_done", p.WalkDone).
					Int64("hashed", p.Hashed).Int64("to_hash", p.ToHash).
					Float64("mb_per_s", p.MBps(now))
				if eta, ok := p.ETA(now); ok {
					ev = ev.Str("eta", eta.Round(time.Second).String())
				} else {
					ev = ev.Str("eta", "unknown")
				}
				ev.Msg("file sync progress")
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
