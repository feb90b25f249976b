package main

import (
	"fmt"
	"io"
	"time"

	"github.com/homeindex/homeindex/internal/app"
	"github.com/homeindex/homeindex/internal/filesync"
	"github.com/homeindex/homeindex/internal/ops"
)

// printHeld says, after a sync, which directories were held and whether removals were held.
func printHeld(e env, a *app.App, st filesync.Stats) {
	r := a.Syncer.Report()
	if r == nil {
		return
	}
	for _, h := range r.HeldDirs {
		fmt.Fprintf(e.stdout, "held: %s is %s; its %d indexed files are kept, not removed\n", shownDir(h.Dir), h.Reason, h.Files)
	}
	if extra := r.HeldTotal - len(r.HeldDirs); extra > 0 {
		fmt.Fprintf(e.stdout, "held: %d more directories\n", extra)
	}
	if h := r.Hold; h != nil {
		fmt.Fprintf(e.stdout, "hold: %d files not found would make %d of %d documents missing at once; nothing removed.\n"+
			"      Confirm with: homeindexd sync --confirm-missing\n", h.Paths, h.Documents, h.Live)
	}
}

// printMissing is status's missing-files part.
func printMissing(w io.Writer, m ops.MissingStatus) {
	if m.Documents > 0 || m.PurgedTotal > 0 {
		fmt.Fprintf(w, "missing: %d documents kept for %s after their files disappeared; %d purged\n", m.Documents,
			time.Duration(m.RetentionSeconds*float64(time.Second)), m.PurgedTotal)
	}
	for _, h := range m.Held {
		fmt.Fprintf(w, "held: %s is %s; %d indexed files kept\n", h.Dir, h.Reason, h.Files)
	}
	if extra := m.HeldTotal - len(m.Held); extra > 0 {
		fmt.Fprintf(w, "held: %d more directories\n", extra)
	}
	if h := m.Hold; h != nil {
		fmt.Fprintf(w, "hold: since %s, %d files not found would make %d of %d documents missing; confirm with homeindexd sync --confirm-missing\n",
			h.Since.Local().Format(time.DateTime), h.Paths, h.Documents, h.Live)
	}
	if m.ConfirmPending {
		fmt.Fprintln(w, "missing: confirmed; the next sync removes the held files")
	}
}

func shownDir(d string) string {
	if d == "" {
		return "the files root"
	}
	return d
}
