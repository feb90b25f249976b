package httpapi

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/homeindex/homeindex/internal/ops"
)

// syncTimeout bounds how long POST /api/sync waits for its sync (a first sync of a large tree
// hashes everything); the client may give up sooner.
const syncTimeout = time.Hour

// mountSync registers POST /api/sync, guarded like the other POSTs.
func mountSync(mux *http.ServeMux, svc *ops.Service) {
	mux.Handle("POST /api/sync", guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			writeError(w, http.StatusRequestEntityTooLarge, "request body too large")
			return
		}
		var req ops.SyncRequest
		if err := decode(body, &req); err != nil {
			reply(w, nil, err)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), syncTimeout)
		defer cancel()
		v, err := svc.Sync(ctx, req)
		reply(w, v, err)
	})))
}

// Change detection metrics.
var (
	mWatches       = desc("watch_watches", "inotify watches placed on directories of the files tree.")
	mWatchBudget   = desc("watch_budget", "Most inotify watches the daemon places (WATCH_LIMIT).")
	mWatchFallback = desc("watch_fallback_active", "1 when some directories are re-walked every REWALK_INTERVAL instead of watched (past the budget, inotify unavailable, network or FUSE file system).")
	mWatchUnwatch  = desc("watch_unwatched_directories", "Directory subtrees re-walked instead of watched.")
	mWatchEvents   = desc("watch_events_total", "File system events the watcher handled (markers and the daemon's own directories excluded).")
	mWatchBatches  = desc("watch_batches_total", "Batches of changes reported to the scheduler (each asks for one sync).")
	mWatchRewalks  = desc("watch_rewalks_total", "Re-walks of unwatched directories.")
	mWatchRewalkS  = desc("watch_last_rewalk_seconds", "Duration of the last re-walk.")
	mWatchOverflow = desc("watch_overflows_total", "inotify event queue overflows (each followed by a full sync).")
	watchDescs     = []*prometheus.Desc{mWatches, mWatchBudget, mWatchFallback, mWatchUnwatch, mWatchEvents,
		mWatchBatches, mWatchRewalks, mWatchRewalkS, mWatchOverflow}
)

// collectWatch exports the watcher's state (nothing when no watcher runs).
func collectWatch(st *ops.Status, gauge, counter func(d *prometheus.Desc, v float64, labels ...string)) {
	w := st.Watch
	if w == nil {
		return
	}
	fallback := 0.0
	if w.Fallback {
		fallback = 1
	}
	gauge(mWatches, float64(w.Watches))
	gauge(mWatchBudget, float64(w.Budget))
	gauge(mWatchFallback, fallback)
	gauge(mWatchUnwatch, float64(w.UnwatchedDirs))
	counter(mWatchEvents, float64(w.Events))
	counter(mWatchBatches, float64(w.Batches))
	counter(mWatchRewalks, float64(w.Rewalks))
	gauge(mWatchRewalkS, w.LastRewalkSecs)
	counter(mWatchOverflow, float64(w.Overflows))
}
