package main

import (
	"context"

	"encoding/json"
	"fmt"
	"github.com/homeindex/homeindex/internal/app"
)

func cmdSync(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "sync", "sync [--json]\n\nRuns one sync of INDEX_DIRECTORY into the catalog, writes the metadata directory and\nthe search index, prints the counts and exits 0.")
	asJSON := fs.Bool("json", false, "print the counts as JSON")
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
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.ImportLegacy(ctx); err != nil {
		return err
	}
	st, err := a.SyncOnce(ctx, "command")
	if err != nil {
		return err
	}
	res, err := a.Outbox.Drain(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]any{"sync": st, "outbox": map[string]any{
			"applied": res.Applied, "metadata_failed": res.MetaFailed, "index_pending": res.IndexPending}})
	}
	fmt.Fprintf(e.stdout, "walked %d, hashed %d (%d bytes), unchanged %d, added %d, modified %d, deleted %d, kept offline %d\n",
		st.Walked, st.Hashed, st.HashedBytes, st.Unchanged, st.Added, st.Modified, st.Deleted, st.KeptOffline)
	fmt.Fprintf(e.stdout, "documents: %d new, %d deleted, %d retired; %d errors; took %s\n",
		st.NewDocs, st.DeletedDocs, st.RetiredDocs, st.Errors, st.Duration.Round(1e6))
	fmt.Fprintf(e.stdout, "outbox: %d applied, %d metadata writes failed, %d index writes pending\n",
		res.Applied, res.MetaFailed, res.IndexPending)
	if res.IndexErr != nil {
		fmt.Fprintf(e.stdout, "search index unavailable (%v): it catches up on the next run\n", res.IndexErr)
	}
	return nil
}
