package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/homeindex/homeindex/internal/app"
	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/internal/filesync"
	"github.com/homeindex/homeindex/internal/ops"
)

// maxSettleRounds bounds how often `sync` waits for files still being written before it
// leaves them to the next sync.
const maxSettleRounds = 3

// syncViaDaemon asks the homeindexd that holds STATE_DIRECTORY's lock to sync (POST
// /api/sync) and prints its summary: the catalog has one writer. A daemon that does not
// answer is an error naming the state directory.
func syncViaDaemon(ctx context.Context, e env, cfg *config.Config, asJSON, confirmMissing bool) error {
	refuse := func(why error) error {
		return fmt.Errorf("STATE_DIRECTORY %s is in use by a running homeindexd (it holds daemon.lock there), "+
			"which did not answer the sync request: %v; the catalog takes one writer, so this sync did nothing",
			cfg.StateDirectory, why)
	}
	c, err := newDaemonClient(e)
	if err != nil {
		return refuse(err)
	}
	c.http = &http.Client{} // a sync takes as long as it takes; ctx (Ctrl-C) ends the wait
	if confirmMissing {     // the daemon's next sync carries out the held removals
		var confirmed json.RawMessage
		if err := c.post(ctx, "/api/missing/confirm", map[string]any{}, &confirmed); err != nil {
			return refuse(err)
		}
	}
	var ans ops.SyncAnswer
	if err := c.post(ctx, "/api/sync", map[string]any{"wait": true}, &ans); err != nil {
		return refuse(err)
	}
	if asJSON {
		return printJSON(e.stdout, map[string]any{"daemon": true, "sync": ans.Sync})
	}
	fmt.Fprintf(e.stdout, "the running daemon synced (it holds %s)\n", cfg.StateDirectory)
	if ans.Sync == nil {
		return errors.New("the daemon answered without a sync summary")
	}
	printSyncStats(e, ans.Sync.Stats)
	if ans.Sync.Error != "" {
		return fmt.Errorf("the daemon's sync failed: %s", ans.Sync.Error)
	}
	return nil
}

// settleAndSync repeats the sync while it left files that were still being written, waiting
// SETTLE_TIME between rounds (at most maxSettleRounds), and returns the summed counts.
func settleAndSync(ctx context.Context, e env, a *app.App, st filesync.Stats) (filesync.Stats, error) {
	for round := 0; st.Unsettled > 0 && round < maxSettleRounds; round++ {
		wait := max(a.Config.Watch.Settle, 100*time.Millisecond)
		fmt.Fprintf(e.stderr, "%d files are still being written; syncing them again in %s\n", st.Unsettled, wait)
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(wait):
		}
		next, err := a.SyncOnce(ctx, "command")
		st = addStats(st, next)
		if err != nil {
			return st, err
		}
	}
	if st.Unsettled > 0 {
		fmt.Fprintf(e.stderr, "%d files still being written are left for the next sync\n", st.Unsettled)
	}
	return st, nil
}

// addStats sums two syncs: what they did adds up, what they saw is the later one's.
func addStats(a, b filesync.Stats) filesync.Stats {
	b.Started = a.Started
	b.Duration += a.Duration
	b.Hashed += a.Hashed
	b.HashedBytes += a.HashedBytes
	b.Added += a.Added
	b.Modified += a.Modified
	b.Deleted += a.Deleted
	b.NewDocs += a.NewDocs
	b.MissingDocs += a.MissingDocs
	b.ReturnedDocs += a.ReturnedDocs
	b.RetiredDocs += a.RetiredDocs
	return b
}

// printSyncStats prints a sync's counts (the same lines for a local sync and a daemon's).
func printSyncStats(e env, st filesync.Stats) {
	fmt.Fprintf(e.stdout, "walked %d, hashed %d (%d bytes), unchanged %d, added %d, modified %d, deleted %d, kept offline %d\n",
		st.Walked, st.Hashed, st.HashedBytes, st.Unchanged, st.Added, st.Modified, st.Deleted, st.KeptOffline)
	fmt.Fprintf(e.stdout, "documents: %d new, %d missing, %d retired, %d returned; %d errors; took %s\n",
		st.NewDocs, st.MissingDocs, st.RetiredDocs, st.ReturnedDocs, st.Errors, st.Duration.Round(1e6))
}
