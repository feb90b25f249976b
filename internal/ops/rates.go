package ops

import (
	"sync"
	"time"
)

// Rate window: 30 buckets of 10 s, five minutes of finished jobs per module.
const (
	bucketWidth = 10 * time.Second
	bucketCount = 30
)

// Rates counts finished jobs per module in 10-second buckets over the last five minutes, and
// in total since start. Safe for concurrent use.
type Rates struct {
	mu      sync.Mutex
	start   time.Time
	modules map[string]*ring
}

type ring struct {
	buckets [bucketCount]int64
	epochs  [bucketCount]int64 // which bucket number each slot holds
	total   int64
}

// NewRates starts counting at now.
func NewRates(now time.Time) *Rates { return &Rates{start: now, modules: map[string]*ring{}} }

// Finished counts a job of module finished now (pipeline.Config.OnFinished).
func (r *Rates) Finished(module, _ string) { r.Observe(module, time.Now()) }

// Observe counts one job of module finished at now.
func (r *Rates) Observe(module string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.modules[module]
	if g == nil {
		g = &ring{}
		r.modules[module] = g
	}
	e := now.UnixNano() / int64(bucketWidth)
	i := e % bucketCount
	if g.epochs[i] != e {
		g.epochs[i], g.buckets[i] = e, 0
	}
	g.buckets[i]++
	g.total++
}

// Window is what Rates saw of one module.
type Window struct {
	LastMinute int64         // jobs finished in the last 60 s
	Last5      int64         // in the last five minutes (or since start)
	Span       time.Duration // how long Last5 covers: min(five minutes, time since start)
	Total      int64         // since start
}

// Window returns module's counts as of now.
func (r *Rates) Window(module string, now time.Time) Window {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := Window{Span: min(now.Sub(r.start), bucketWidth*bucketCount)}
	g := r.modules[module]
	if g == nil {
		return w
	}
	w.Total = g.total
	cur := now.UnixNano() / int64(bucketWidth)
	for k := int64(0); k < bucketCount; k++ {
		e := cur - k
		i := e % bucketCount
		if g.epochs[i] != e {
			continue
		}
		w.Last5 += g.buckets[i]
		if k < int64(time.Minute/bucketWidth) {
			w.LastMinute += g.buckets[i]
		}
	}
	return w
}

// Totals returns the jobs finished since start, per module.
func (r *Rates) Totals() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int64, len(r.modules))
	for m, g := range r.modules {
		out[m] = g.total
	}
	return out
}

// ETA estimates how long a backlog takes at the recent rate. It is known only when it is
// stable: at least a minute observed, at least 5 jobs finished over the window, and the last
// minute's rate within a factor of two of the window's. A zero backlog is known (0); a paused
// module's is not.
func ETA(backlog int64, w Window, paused bool) (time.Duration, bool) {
	if backlog <= 0 {
		return 0, true
	}
	if paused || w.Span < time.Minute || w.Last5 < 5 || w.LastMinute == 0 {
		return 0, false
	}
	perSec := float64(w.Last5) / w.Span.Seconds()
	lastMin := float64(w.LastMinute) / 60
	if lastMin < perSec/2 || lastMin > perSec*2 {
		return 0, false
	}
	return time.Duration(float64(backlog) / perSec * float64(time.Second)), true
}
