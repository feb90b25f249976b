// Package gcfloor keeps the Go garbage collector from running more often than a small heap
// needs. With GOGC's default of 100 the next collection starts once the heap has doubled, so
// a process whose live heap is a few megabytes but which allocates quickly (the daemon: a
// sync or a module hop allocates about 24 KB a file, most of it garbage within the round)
// collects dozens of times a second, and every cycle preempts every goroutine and turns on
// write barriers.
//
// Start sets GOGC after each collection so the next one waits for about a fixed headroom of
// new allocation. The runtime's heap goal is live + (live + stacks + globals)·GOGC/100, and
// never below 4 MiB·GOGC/100, so GOGC becomes max(base, 100·headroom/max(live + stacks +
// globals, 4 MiB)). A small live heap gets the headroom; a live heap larger than the headroom
// keeps the base percentage, so the extra memory this costs is bounded by the headroom
// whatever the heap's size. A GOMEMLIMIT applies on top as it always does; GOGC at the
// start is the base, and GOGC=off is left alone. (homeindexd starts the floor only when its
// environment sets no GOGC: an operator's GOGC is taken as it is.)
package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DaemonHeadroom is homeindexd's headroom. Measured on a first sync of 100k small files
// (docs/benchmarks.md): user CPU −10% and peak RSS +7 MB against GOGC=100 alone; 32 MiB saved
// no more CPU and cost 23 MB.
const DaemonHeadroom = 16 << 20

// maxPercent bounds any GOGC read or set here.
const maxPercent = 10000

// heapMinimum is the runtime's smallest heap goal at GOGC=100 (runtime.defaultHeapMinimum):
// the goal never falls below heapMinimum·GOGC/100.
const heapMinimum = 4 << 20

// Floor is a running tuner.
type Floor struct {
	headroom uint64
	base     int
	mu       sync.Mutex // guards stopped and samples; orders adjust and Stop's restore
	stopped  bool
	samples  []metrics.Sample
}

// Start begins tuning for a headroom in bytes; Stop restores the base GOGC. It returns nil,
// doing nothing, when GOGC is off or headroom is zero.
func Start(headroom uint64) *Floor {
	f := &Floor{headroom: headroom, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
		{Name: "/gc/gogc:percent"},
	}}
	metrics.Read(f.samples)
	base := f.samples[3].Value.Uint64()
	if headroom == 0 || base == 0 || base > maxPercent { // GOGC=off reads as -1 turned unsigned
		return nil
	}
	f.base = int(base)
	f.adjust()
	f.arm()
	return f
}

// Percent is the GOGC the floor sets for a live heap of live bytes whose collection scans
// roots (stacks and globals) bytes besides.
func (f *Floor) Percent(live, roots uint64) int {
	p := math.Ceil(100 * float64(f.headroom) / float64(max(live+roots, heapMinimum)))
	return int(min(max(p, float64(f.base)), maxPercent))
}

// Stop ends the tuning and restores the base GOGC. It may be called on a nil Floor.
func (f *Floor) Stop() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	debug.SetGCPercent(f.base)
}

// adjust sets GOGC for the live heap the last collection marked; false once stopped.
func (f *Floor) adjust() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return false
	}
	metrics.Read(f.samples[:3])
	live, stacks, globals := f.samples[0].Value.Uint64(), f.samples[1].Value.Uint64(), f.samples[2].Value.Uint64()
	debug.SetGCPercent(f.Percent(live, stacks+globals))
	return true
}

// gcTick is garbage as soon as it is made: its finalizer runs after the next collection.
// It is larger than the tiny allocator's 16 bytes, whose objects may never be finalized.
type gcTick struct {
	f *Floor
	_ [16]byte
}

// arm schedules adjust after the next collection, which then arms again.
func (f *Floor) arm() {
	runtime.SetFinalizer(&gcTick{f: f}, func(t *gcTick) {
		if t.f.adjust() {
			t.f.arm()
		}
	})
}
