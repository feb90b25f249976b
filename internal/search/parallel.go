package search

import (
	"runtime"
	"sync"
)

// parallelMin is the fewest documents per goroutine worth starting one for.
const parallelMin = 128

// inParallel calls fn over [0, n) cut into one range per core, each on its own goroutine, and
// waits for them; fewer than 2×parallelMin items run in the caller. Preparing documents for
// the index is pure CPU and the write after it is single-threaded, so a large batch (a first
// sync's) is prepared on every core.
func inParallel(n int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n/parallelMin)
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		wg.Go(func() { fn(lo, min(lo+per, n)) })
	}
	wg.Wait()
}
