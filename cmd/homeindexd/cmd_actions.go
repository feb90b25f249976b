package main

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/homeindex/homeindex/internal/ops"
)

func cmdFailed(ctx context.Context, e env, args []string) error {
	if len(args) > 0 && args[0] == "clear" {
		return cmdFailedClear(ctx, e, args[1:])
	}
	fs := newFlags(e, "failed", "failed [--module M] [--limit N] [--json]\n       failed clear [--module M]\n\nLists parked jobs (newest first, with their reasons) and quarantined results;\n`failed clear` forgets them (running jobs are never touched).")
	module := fs.String("module", "", "only this module")
	limit := fs.Int("limit", 100, "at most this many of each (0: all)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 1 && fs.Arg(0) == "clear" {
		return cmdFailedClear(ctx, e, []string{"--module", *module})
	}
	if fs.NArg() > 0 {
		return usageError{"failed: unexpected arguments (did you mean `failed clear`?)"}
	}
	if *limit < 0 {
		return usageError{"failed: --limit must be ≥ 0"}
	}
	c, err := newDaemonClient(e)
	if err != nil {
		return err
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}}
	if *module != "" {
		q.Set("module", *module)
	}
	var list ops.FailedList
	if err := c.get(ctx, "/api/failed?"+q.Encode(), &list); err != nil {
		return err
	}
	if wantJSON(e, *asJSON) {
		return printJSON(e.stdout, list)
	}
	mods := make([]string, 0, len(list.ParkedTotal))
	for m := range list.ParkedTotal {
		mods = append(mods, m)
	}
	slices.Sort(mods)
	for _, m := range mods {
		fmt.Fprintf(e.stdout, "%s: %d parked, %d dropped by FAILED_MAX\n", m, list.ParkedTotal[m], list.ParkedDropped[m])
	}
	if len(list.Parked) > 0 {
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\nMODULE\tFILE\tID\tATTEMPTS\tPARKED AT\tREASON")
		for _, f := range list.Parked {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", f.Module, f.Path, f.ID, f.Attempts, f.At.Local().Format(time.DateTime), oneLine(f.Reason))
		}
		tw.Flush()
	}
	fmt.Fprintf(e.stdout, "\nquarantine: %d kept, %d dropped by the bound\n", list.QuarantineTotal, list.QuarantineDropped)
	if len(list.Quarantined) > 0 {
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "MODULE\tAT\tBYTES\tREASON")
		for _, q := range list.Quarantined {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", q.Module, q.At.Local().Format(time.DateTime), q.Bytes, oneLine(q.Reason))
		}
		tw.Flush()
	}
	return nil
}

func cmdFailedClear(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "failed clear", "failed clear [--module M] [--json]\n\nForgets parked jobs and quarantined results (of one module, or all). Documents keep\ntheir failures entry; cleared jobs no longer run again at the next start.")
	module := fs.String("module", "", "only this module")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"failed clear: unexpected arguments"}
	}
	c, err := newDaemonClient(e)
	if err != nil {
		return err
	}
	var out ops.Cleared
	if err := c.post(ctx, "/api/failed/clear", map[string]string{"module": *module}, &out); err != nil {
		return err
	}
	if wantJSON(e, *asJSON) {
		return printJSON(e.stdout, out)
	}
	fmt.Fprintf(e.stdout, "cleared %d parked jobs and %d quarantined results\n", out.Parked, out.Quarantined)
	return nil
}

func cmdRetry(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "retry", "retry [--module M] [--file ID|PATH] [--all] [--json]\n\nRuns parked jobs again (new dispatch, attempt 1): those of --module M, of --file (a\ndocument id, or a path under INDEX_DIRECTORY), or --all. Paused modules are skipped.")
	var req ops.RetryRequest
	fs.StringVar(&req.Module, "module", "", "only this module")
	fs.StringVar((*string)(&req.File), "file", "", "only this file: a document id or a path")
	fs.BoolVar(&req.All, "all", false, "every parked job (of --module, when given)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"retry: unexpected arguments"}
	}
	if req.Module == "" && req.File == "" && !req.All {
		return usageError{"retry: say what to retry: --all, --module M or --file ID|PATH"}
	}
	c, err := newDaemonClient(e)
	if err != nil {
		return err
	}
	var out ops.Retried
	if err := c.post(ctx, "/api/retry", req, &out); err != nil {
		return err
	}
	if wantJSON(e, *asJSON) {
		return printJSON(e.stdout, out)
	}
	fmt.Fprintf(e.stdout, "%d parked jobs queued again\n", out.Total)
	for m, n := range out.Retried {
		fmt.Fprintf(e.stdout, "  %s: %d\n", m, n)
	}
	for _, m := range out.SkippedPaused {
		fmt.Fprintf(e.stdout, "  %s: paused, skipped (resume it first)\n", m)
	}
	return nil
}

func cmdPause(ctx context.Context, e env, args []string) error {
	return pauseResume(ctx, e, args, true)
}
func cmdResume(ctx context.Context, e env, args []string) error {
	return pauseResume(ctx, e, args, false)
}

func pauseResume(ctx context.Context, e env, args []string, pause bool) error {
	name, help := "resume", "resume MODULE [--json]\n\nLets a paused module get jobs again."
	if pause {
		name, help = "pause", "pause MODULE [--json]\n\nStops new dispatches to a module; jobs already in Redis finish. Persists across restarts."
	}
	fs := newFlags(e, name, help)
	asJSON := fs.Bool("json", false, "print JSON")
	var module string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		module, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if module == "" && fs.NArg() == 1 {
		module = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return usageError{name + ": unexpected arguments"}
	}
	if module == "" {
		return usageError{name + ": which module? usage: homeindexd " + name + " MODULE"}
	}
	c, err := newDaemonClient(e)
	if err != nil {
		return err
	}
	var out ops.PauseResult
	if err := c.post(ctx, "/api/"+name, map[string]string{"module": module}, &out); err != nil {
		return err
	}
	if wantJSON(e, *asJSON) {
		return printJSON(e.stdout, out)
	}
	state := "resumed"
	if out.Paused {
		state = "paused"
	}
	if !out.Changed {
		state = "already " + state
	}
	fmt.Fprintf(e.stdout, "%s %s\n", out.Module, state)
	return nil
}

func cmdRequeue(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "requeue", "requeue --module M [--path PREFIX] [--json]\n\nSends the documents under PREFIX (a path under INDEX_DIRECTORY; all when omitted) that\nreached module M back to it; their drives turn pending until it is done.")
	var req ops.RequeueRequest
	fs.StringVar(&req.Module, "module", "", "the module to run again (required)")
	fs.StringVar((*string)(&req.Path), "path", "", "only documents with a path under this prefix")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"requeue: unexpected arguments"}
	}
	if req.Module == "" {
		return usageError{"requeue: --module is required"}
	}
	c, err := newDaemonClient(e)
	if err != nil {
		return err
	}
	var out ops.Requeued
	if err := c.post(ctx, "/api/requeue", req, &out); err != nil {
		return err
	}
	if wantJSON(e, *asJSON) {
		return printJSON(e.stdout, out)
	}
	where := "everywhere"
	if out.Path != "" {
		where = "under " + out.Path
	}
	fmt.Fprintf(e.stdout, "%d documents %s go back to %s\n", out.Documents, where, out.Module)
	return nil
}
