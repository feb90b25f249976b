package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/homeindex/homeindex/internal/app"
	"github.com/homeindex/homeindex/internal/filesync"
)

func cmdSync(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "sync", "sync [--json] [--confirm-missing]\n\nRuns one sync of INDEX_DIRECTORY into the catalog, writes the metadata directory and\nthe search index, prints the counts and exits 0. Beside a running daemon (it holds\nSTATE_DIRECTORY's lock) it asks that daemon to sync instead, through HTTP_ADDR.")
	asJSON := fs.Bool("json", false, "print the counts as JSON")
	confirmMissing := fs.Bool("confirm-missing", false, "carry out the removals a sync holds (a mass removal, files below emptied directories)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"sync: unexpected arguments"}
	}
	cfg, log, err := loadConfig(e)
	if err != nil {
		return err
	}
	if err := cfg.CheckIndexDirectory(); err != nil {
		return err // before anything is created
	}
	if app.StateDirBusy(cfg.StateDirectory) { // a daemon runs here: it syncs (cmd_sync_daemon.go)
		return syncViaDaemon(ctx, e, cfg, *asJSON, *confirmMissing)
	}
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	if !a.HoldStateLock() {
		return syncViaDaemon(ctx, e, cfg, *asJSON, *confirmMissing)
	}
	if err := a.ImportLegacy(ctx); err != nil {
		return err
	}
	if *confirmMissing {
		if err := a.ConfirmMissing(ctx); err != nil {
			return err
		}
	}
	var st filesync.Stats
	endLoad := a.BeginFirstLoad(ctx)
	applied, err := a.Outbox.DrainWhile(ctx, func() error { // the outbox applies each batch as it is recorded
		var err error
		st, err = a.SyncOnce(ctx, "command")
		if err == nil {
			st, err = settleAndSync(ctx, e, a, st)
		}
		return err
	})
	if err != nil {
		return err
	}
	res, err := a.Outbox.Drain(ctx)
	if err != nil {
		return err
	}
	endLoad()
	res.Applied += applied
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]any{"sync": st, "outbox": map[string]any{
			"applied": res.Applied, "metadata_failed": res.MetaFailed, "index_pending": res.IndexPending}})
	}
	printSyncStats(e, st)
	printHeld(e, a, st)
	fmt.Fprintf(e.stdout, "outbox: %d applied, %d metadata writes failed, %d index writes pending\n",
		res.Applied, res.MetaFailed, res.IndexPending)
	if res.IndexErr != nil {
		fmt.Fprintf(e.stdout, "search index unavailable (%v): it catches up on the next run\n", res.IndexErr)
	}
	return nil
}
