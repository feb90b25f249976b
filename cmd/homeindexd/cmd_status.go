package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/homeindex/homeindex/internal/ops"
	"github.com/homeindex/homeindex/protocol"
)

// wantJSON: --json, or stdout is not a terminal.
func wantJSON(e env, flag bool) bool { return flag || !isTTY(e.stdout) }

func cmdStatus(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "status", "status [--json]\n\nShows where the running daemon stands: per module, per drive, the last sync.\nA table on a terminal, JSON otherwise. Exit 1 when the daemon is unreachable.")
	asJSON := fs.Bool("json", false, "print JSON (the /api/status document)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"status: unexpected arguments"}
	}
	c, err := newDaemonClient(e)
	if err != nil {
		return err
	}
	var st ops.Status
	if err := c.get(ctx, "/api/status", &st); err != nil {
		return err
	}
	if wantJSON(e, *asJSON) {
		return printJSON(e.stdout, st)
	}
	printStatus(e.stdout, &st)
	return nil
}

func printStatus(w io.Writer, st *ops.Status) {
	paused := "none"
	if len(st.Pipeline.Paused) > 0 {
		paused = strings.Join(st.Pipeline.Paused, ", ")
	}
	fmt.Fprintf(w, "homeindexd %s, up %s, pipeline %s, paused: %s\n", st.Version,
		st.GeneratedAt.Sub(st.StartedAt).Round(time.Second), st.Pipeline.State, paused)
	fmt.Fprintf(w, "documents: %d live, %d retired, %d paths; outbox %d pending (%d for the index)\n",
		st.Documents.Live, st.Documents.Retired, st.Documents.Files, st.Index.OutboxPending, st.Index.IndexPending)
	if st.Pipeline.Reason != "" {
		since := ""
		if st.Pipeline.Since != nil {
			since = fmt.Sprintf(" (since %s, %s ago)", st.Pipeline.Since.Local().Format(time.DateTime),
				st.GeneratedAt.Sub(*st.Pipeline.Since).Round(time.Second))
		}
		fmt.Fprintf(w, "pipeline %s: %s%s\n", st.Pipeline.State, st.Pipeline.Reason, since)
	}
	printWatch(w, st.Watch)
	for _, e := range st.Errors {
		fmt.Fprintf(w, "warning: %s\n", e)
	}
	printMissing(w, st.Missing)
	if len(st.Modules) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "MODULE\tSTATE\tWAITING\tOFFLINE\tRECOVERING\tQUEUED\tIN FLIGHT\tMERGING\tDONE\tPARKED\tOLDEST\tPER MIN\tETA")
		for _, m := range st.Modules {
			state := "active"
			if m.Paused {
				state = "paused"
			}
			oldest := "-"
			if m.OldestWaitingSeconds != nil {
				oldest = (time.Duration(*m.OldestWaitingSeconds * float64(time.Second))).Round(time.Second).String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%s\n", m.Name, state, m.Waiting, m.WaitingOffline,
				m.Recovering, m.Queued, m.InFlight, m.Merging, m.Done, m.Parked, oldest, m.ThroughputPerMinute, m.ETA)
		}
		tw.Flush()
		for _, m := range st.Modules {
			if len(m.LatestFailures) == 0 && m.ParkedDropped == 0 {
				continue
			}
			fmt.Fprintf(w, "\n%s: %d parked", m.Name, m.Parked)
			if m.ParkedDropped > 0 {
				fmt.Fprintf(w, " (%d older ones dropped by FAILED_MAX)", m.ParkedDropped)
			}
			fmt.Fprintln(w, "; latest:")
			for _, f := range m.LatestFailures {
				fmt.Fprintf(w, "  %s  %s  after %d attempts, %s: %s\n", f.At.Local().Format(time.DateTime), orID(f), f.Attempts, m.Name, oneLine(f.Reason))
			}
		}
	}
	if len(st.Drives) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "DRIVE\tPRESENT\tMARKER\tSTATE\tFILES\tPENDING\tDONE\tFAILED")
		for _, d := range st.Drives {
			present, marker := "no", d.Marker
			if d.Present {
				present = "yes"
			}
			if marker == "" {
				marker = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", d.Name, present, marker, d.State, d.Files, d.Pending, d.Done, d.Failed)
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	if p := st.Sync.Progress; p != nil {
		fmt.Fprintf(w, "sync running since %s: walked %d, hashed %d of %d, %.1f MB/s, eta %s\n",
			p.Started.Local().Format(time.DateTime), p.Walked, p.Hashed, p.ToHash, p.MBPerSecond, p.ETA)
	}
	if l := st.Sync.Last; l != nil {
		s := l.Stats
		fmt.Fprintf(w, "last sync: %s (%s), took %s: walked %d, hashed %d, added %d, modified %d, deleted %d, errors %d\n",
			l.Started.Local().Format(time.DateTime), l.Reason, s.Duration.Round(time.Millisecond), s.Walked, s.Hashed,
			s.Added, s.Modified, s.Deleted, s.Errors)
		if l.Error != "" {
			fmt.Fprintf(w, "  failed: %s\n", l.Error)
		}
	} else {
		fmt.Fprintln(w, "last sync: none yet")
	}
	if st.Pipeline.State != ops.PipelineOff {
		fmt.Fprintf(w, "quarantine: %d results kept, %d dropped by the bound\n", st.Quarantine.Count, st.Quarantine.Dropped)
	}
}

func orID(f ops.Failure) string {
	if f.Path != "" {
		return protocol.LineName(f.Path) // one line, whatever the name holds
	}
	return f.ID
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
