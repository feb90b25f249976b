package watch

import "time"

// batcher coalesces changes: a batch is due once no change came for settle, or maxDelay after
// its first change, whichever is sooner, so a tree that never quiets down still syncs.
type batcher struct {
	settle, maxDelay time.Duration
	n                int
	first, last      time.Time
	t                *time.Timer
}

// add records one change at now.
func (b *batcher) add(now time.Time) {
	if b.n == 0 {
		b.first = now
		b.arm(now)
	}
	b.n++
	b.last = now
}

// deadline is when the current batch is due.
func (b *batcher) deadline() time.Time {
	d := b.last.Add(b.settle)
	if limit := b.first.Add(b.maxDelay); limit.Before(d) {
		d = limit
	}
	return d
}

// arm sets the timer for the deadline (the timer is not reset on every change: when it fires
// early, due re-arms it).
func (b *batcher) arm(now time.Time) {
	d := b.deadline().Sub(now)
	if b.t == nil {
		b.t = time.NewTimer(d)
		return
	}
	b.t.Reset(d)
}

// timerC is the timer's channel while a batch is open, else nil (never ready).
func (b *batcher) timerC() <-chan time.Time {
	if b.n == 0 || b.t == nil {
		return nil
	}
	return b.t.C
}

// due says whether the batch is complete at now; if not, it re-arms the timer.
func (b *batcher) due(now time.Time) bool {
	if b.n == 0 {
		return false
	}
	if now.Before(b.deadline()) {
		b.arm(now)
		return false
	}
	return true
}

// take closes the batch and returns how many changes it held.
func (b *batcher) take() int {
	n := b.n
	b.n = 0
	return n
}

func (b *batcher) stop() {
	if b.t != nil {
		b.t.Stop()
	}
}
