package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/homeindex/homeindex/internal/app"
	"github.com/homeindex/homeindex/internal/scheduler"
	"github.com/homeindex/homeindex/internal/watch"
)

// maxFollowUp bounds the wait before re-checking files that were still being written.
const maxFollowUp = 5 * time.Minute

// followUps schedules the sync that takes files a sync left because they were still being
// written. The wait starts at SETTLE_TIME and doubles while every follow-up still finds such
// files (a log appended to forever costs a sync every 5 minutes, not one per SETTLE_TIME).
type followUps struct {
	settle time.Duration
	runs   int // consecutive syncs that left files unsettled
}

// after is called after each sync (the scheduler runs one at a time) with its unsettled count.
func (f *followUps) after(sched *scheduler.Scheduler, unsettled int) {
	if unsettled == 0 {
		f.runs = 0
		return
	}
	d := max(f.settle, time.Second) << min(f.runs, 10)
	f.runs++
	sched.TriggerAfter(min(d, maxFollowUp), "files settled")
}

// syncHooks wires the scheduler into POST /api/sync. A waiting request also drains the
// outbox before it answers, so what the sync found is searchable when `homeindexd sync`
// returns beside a daemon, as it is when the command runs alone (the outbox's own loop
// would apply it a gather interval later).
func syncHooks(sched **scheduler.Scheduler, a *app.App) (request func(ctx context.Context) error, trigger func(reason string)) {
	return func(ctx context.Context) error {
			if err := (*sched).Request(ctx, "requested"); err != nil {
				return err
			}
			_, err := a.Outbox.Drain(ctx)
			return err
		},
		func(reason string) { (*sched).Trigger(reason) }
}

// holdStateLock takes STATE_DIRECTORY's lock for `run`; another live homeindexd on the same
// state directory keeps it, and this one carries on as before (its pipeline waits as a
// standby on the Redis lock).
func holdStateLock(a *app.App) {
	if !a.HoldStateLock() {
		a.Log.Warn().Str("state_directory", a.Config.StateDirectory).
			Msg("another homeindexd holds this state directory's lock; `homeindexd sync` will ask that one")
	}
}

// printWatch prints how changes are detected, and the fallback when it is on (status table).
func printWatch(w io.Writer, ws *watch.Status) {
	if ws == nil {
		return
	}
	fmt.Fprintf(w, "change detection: %s, %d of %d inotify watches", ws.Mode, ws.Watches, ws.Budget)
	if ws.Fallback {
		fmt.Fprintf(w, "; fallback: %d directories re-walked every %s (%s)", ws.UnwatchedDirs,
			time.Duration(ws.RewalkSeconds*float64(time.Second)), strings.Join(ws.Reasons, ", "))
	}
	fmt.Fprintln(w)
}
