package ops

import (
	"context"
	"sync"

	"github.com/homeindex/homeindex/internal/dispatch"
	"github.com/homeindex/homeindex/internal/merge"
	"github.com/homeindex/homeindex/internal/reaper"
)

// Counters are the daemon's cumulative counts since start, for /metrics. The pipeline builds a
// new merger, reaper and dispatcher each time it (re)starts; the counts carry over.
type Counters struct {
	Merge      merge.Stats
	Reap       reaper.Stats
	Dispatched int64
	Withdrawn  int64
	// RedisErrors counts commands and dials that failed for want of a connection.
	RedisErrors int64
	// Finished counts jobs the merger finished per module.
	Finished map[string]int64
	// Syncs and SyncsFailed count finished syncs.
	Syncs, SyncsFailed int64
}

// accumulator adds the counts of pipeline parts that were replaced to those of the current ones.
type accumulator struct {
	mu sync.Mutex

	merger    *merge.Merger
	mergeBase merge.Stats
	mergeLast merge.Stats
	reaper    *reaper.Reaper
	reapBase  reaper.Stats
	reapLast  reaper.Stats
	disp      *dispatch.Dispatcher
	dispBase  [2]int64
	dispLast  [2]int64
}

func addMerge(a, b merge.Stats) merge.Stats {
	return merge.Stats{Merged: a.Merged + b.Merged, Replayed: a.Replayed + b.Replayed, Stale: a.Stale + b.Stale,
		UnknownModule: a.UnknownModule + b.UnknownModule, Quarantined: a.Quarantined + b.Quarantined,
		Failed: a.Failed + b.Failed, Permanent: a.Permanent + b.Permanent, RejectedFields: a.RejectedFields + b.RejectedFields}
}

func addReap(a, b reaper.Stats) reaper.Stats {
	return reaper.Stats{Passes: a.Passes + b.Passes, Requeued: a.Requeued + b.Requeued, Retrying: a.Retrying + b.Retrying,
		Promoted: a.Promoted + b.Promoted, Parked: a.Parked + b.Parked, Dropped: a.Dropped + b.Dropped, Orphans: a.Orphans + b.Orphans}
}

// Counters reads the cumulative counts.
func (s *Service) Counters(ctx context.Context) Counters {
	c := Counters{Finished: s.rates.Totals()}
	_, c.Syncs, c.SyncsFailed = s.cfg.Files.LastSync(ctx)
	if s.pipe == nil {
		return c
	}
	a := &s.acc
	a.mu.Lock()
	defer a.mu.Unlock()
	if m := s.pipe.Merger(); m != nil {
		if m != a.merger {
			a.mergeBase, a.mergeLast, a.merger = addMerge(a.mergeBase, a.mergeLast), merge.Stats{}, m
		}
		a.mergeLast = m.Stats()
	}
	if r := s.pipe.Reaper(); r != nil {
		if r != a.reaper {
			a.reapBase, a.reapLast, a.reaper = addReap(a.reapBase, a.reapLast), reaper.Stats{}, r
		}
		a.reapLast = r.Stats()
	}
	if d := s.pipe.Dispatcher(); d != nil {
		if d != a.disp {
			a.dispBase = [2]int64{a.dispBase[0] + a.dispLast[0], a.dispBase[1] + a.dispLast[1]}
			a.dispLast, a.disp = [2]int64{}, d
		}
		a.dispLast[0], a.dispLast[1] = d.Counts()
	}
	c.Merge = addMerge(a.mergeBase, a.mergeLast)
	c.Reap = addReap(a.reapBase, a.reapLast)
	c.Dispatched, c.Withdrawn = a.dispBase[0]+a.dispLast[0], a.dispBase[1]+a.dispLast[1]
	if q := s.pipe.Queue(); q != nil {
		c.RedisErrors = q.Errors()
	}
	return c
}
