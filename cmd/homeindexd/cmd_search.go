package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/homeindex/homeindex/internal/app"
	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/protocol"
)

const searchSynopsis = `search [flags] [WORDS...]   (flags may come before or after the words; -- ends them)

Searches file names, paths, module fields and module content (text, transcripts, OCR).
One block per hit: the path of an online copy first, its drive and offline state, kind,
date, size, then snippets with the matching words in [brackets].
Sort: relevance (default), newest, oldest, largest, smallest, name, or attribute:asc|desc.
Filters use the Meilisearch syntax, e.g. --filter 'kind = image AND year = 2019'.`

func cmdSearch(ctx context.Context, e env, args []string) error {
	fl := newFlags(e, "search", searchSynopsis)
	var filters multiFlag
	fl.Var(&filters, "filter", "filter expression (repeatable; all must hold)")
	sortBy := fl.String("sort", "relevance", "relevance, newest, oldest, largest, smallest, name, or attribute:asc|desc")
	limit := fl.Int("limit", 20, fmt.Sprintf("maximum hits (1-%d)", search.MaxLimit))
	offset := fl.Int("offset", 0, "hits to skip")
	facets := fl.Bool("facets", false, "print facet counts (kind, extension, drive, year, camera, offline and module attributes)")
	snippets := fl.Int("snippets", search.MaxSnippets, "snippets per hit (0-3)")
	asJSON := fl.Bool("json", false, "print one JSON document per line (snippets in \"_snippets\"; with --facets a last line {\"total\", \"facets\"})")
	words, err := parseInterleaved(fl, args)
	if err != nil {
		return err
	}
	if *limit < 1 || *limit > search.MaxLimit || *offset < 0 || *snippets < 0 || *snippets > search.MaxSnippets {
		return usageError{fmt.Sprintf("search: --limit must be 1-%d, --offset ≥ 0, --snippets 0-%d", search.MaxLimit, search.MaxSnippets)}
	}
	cfg, _, err := loadConfig(e)
	if err != nil {
		return err
	}
	if cfg.Meilisearch.Host == "" {
		// Opening would create an empty index: say where we looked instead.
		if _, err := os.Stat(app.SearchIndexFile(cfg)); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no search index in STATE_DIRECTORY=%s (%s not found): run `homeindexd sync` or `homeindexd run` with this STATE_DIRECTORY first",
				cfg.StateDirectory, app.SearchIndexFile(cfg))
		}
	}
	idx, err := app.OpenIndex(ctx, cfg)
	if err != nil {
		return err
	}
	defer idx.Close()
	if n, err := idx.Files().Count(ctx); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("the search index is empty (%s, STATE_DIRECTORY=%s): run `homeindexd sync` first", idx.Name(), cfg.StateDirectory)
	}
	q := search.FileQuery{Q: strings.Join(words, " "), Filters: filters, Sort: *sortBy, Limit: *limit, Offset: *offset, Snippets: *snippets}
	if *facets {
		q.Facets = app.FacetAttributes(cfg)
	}
	// Drive facet values say whether each drive is online, as /api/search does: from the
	// catalog's drive registry, which the running daemon keeps current (read-only here, so
	// beside the daemon too). Without a catalog (an index used from elsewhere) they say nothing.
	s := search.IndexSearcher{Index: idx}
	if _, err := os.Stat(app.CatalogFile(cfg)); err == nil {
		s.Drives = func(ctx context.Context) (map[string]bool, error) { return app.DrivePresence(ctx, cfg) }
	}
	res, err := s.SearchFiles(ctx, q)
	if err != nil {
		return err
	}
	if *asJSON {
		return printSearchJSON(e.stdout, res, *facets)
	}
	printSearch(e.stdout, res, cfg, *offset, isTTY(e.stdout))
	return nil
}

// parseInterleaved parses flags placed before, between and after the words; "--" ends the
// flags (everything after it is words).
func parseInterleaved(fl *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for {
		if err := parseFlags(fl, args); err != nil {
			return nil, err
		}
		rest := fl.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(words, rest...), nil
		}
		if len(rest) == 0 {
			return words, nil
		}
		words, args = append(words, rest[0]), rest[1:]
	}
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " AND ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func printSearchJSON(w io.Writer, res search.FileResult, facets bool) error {
	for _, h := range res.Hits {
		line := h.Doc
		if len(h.Snippets) > 0 {
			var d map[string]json.RawMessage
			if err := json.Unmarshal(h.Doc, &d); err != nil {
				return err
			}
			s, err := json.Marshal(h.Snippets)
			if err != nil {
				return err
			}
			d["_snippets"] = s
			if line, err = json.Marshal(d); err != nil {
				return err
			}
		}
		fmt.Fprintln(w, string(line))
	}
	if facets {
		b, err := json.Marshal(map[string]any{"total": res.Total, "facets": res.Facets})
		if err != nil {
			return err
		}
		fmt.Fprintln(w, string(b))
	}
	return nil
}

// hitDoc is what a hit's block shows.
type hitDoc struct {
	protocol.Document
	Kind  string
	Date  float64
	Drive []string
}

func decodeHit(raw json.RawMessage) hitDoc {
	var h hitDoc
	_ = json.Unmarshal(raw, &h.Document)
	var extra struct {
		Kind  string   `json:"kind"`
		Date  float64  `json:"date"`
		Drive []string `json:"drive"`
	}
	_ = json.Unmarshal(raw, &extra)
	h.Kind, h.Date, h.Drive = extra.Kind, extra.Date, extra.Drive
	return h
}

func printSearch(w io.Writer, res search.FileResult, cfg *config.Config, offset int, tty bool) {
	switch res.Total {
	case 1:
		fmt.Fprintln(w, "1 hit")
	default:
		fmt.Fprintf(w, "%d hits", res.Total)
		if len(res.Hits) > 0 && int64(len(res.Hits)) < res.Total {
			fmt.Fprintf(w, " (%d-%d shown)", offset+1, offset+len(res.Hits))
		}
		fmt.Fprintln(w)
	}
	for _, h := range res.Hits {
		d := decodeHit(h.Doc)
		fmt.Fprintln(w)
		first := "(no path)"
		if len(d.Paths) > 0 {
			first = protocol.LineName(d.Paths[0].Path) // one line, whatever the name holds
		}
		fmt.Fprintln(w, first)
		drive := driveLabel(first, cfg.ArchiveRel)
		state := "online"
		if d.Offline {
			state = "offline"
			if drive != search.LocalDrive {
				state = "offline: plug in drive " + drive
			}
		}
		date := ""
		if d.Date != 0 {
			date = time.Unix(int64(d.Date), 0).UTC().Format("2006-01-02")
		}
		size := fmt.Sprintf("%d bytes", d.Size)
		if tty {
			size = humanSize(d.Size)
		}
		fields := []string{"drive " + drive + " (" + state + ")", d.Kind, date, size, "id " + d.ID}
		fields = slices.DeleteFunc(fields, func(s string) bool { return s == "" })
		fmt.Fprintln(w, "  "+strings.Join(fields, " · "))
		for _, p := range d.Paths[min(1, len(d.Paths)):] {
			fmt.Fprintf(w, "  also %s (drive %s)\n", protocol.LineName(p.Path), driveLabel(p.Path, cfg.ArchiveRel))
		}
		for _, s := range h.Snippets {
			fmt.Fprintf(w, "  %s: %s\n", snippetWhere(s), snippetLine(s))
		}
	}
	if len(res.Facets) == 0 {
		return
	}
	names := make([]string, 0, len(res.Facets))
	for f := range res.Facets {
		names = append(names, f)
	}
	slices.Sort(names)
	fmt.Fprintln(w, "\nfacets:")
	for _, f := range names {
		var vals []string
		for _, c := range res.Facets[f] {
			state := ""
			if c.Online != nil {
				state = ", offline"
				if *c.Online {
					state = ", online"
				}
			}
			vals = append(vals, fmt.Sprintf("%s (%d%s)", c.Value, c.Count, state))
		}
		if len(vals) == 0 {
			vals = []string{"-"}
		}
		fmt.Fprintf(w, "  %s: %s\n", f, strings.Join(vals, ", "))
	}
}

func driveLabel(path, archiveRel string) string {
	if strings.HasPrefix(path, archiveRel+"/") {
		rest := path[len(archiveRel)+1:]
		if i := strings.IndexByte(rest, '/'); i > 0 {
			return rest[:i]
		}
	}
	return search.LocalDrive
}

// snippetWhere is "module p.2", "module 1:05", "module sheet Q1"…
func snippetWhere(s search.Snippet) string {
	where := s.Module
	str := func(k string) string {
		var v any
		if json.Unmarshal(s.Location[k], &v) != nil {
			return ""
		}
		return fmt.Sprint(v)
	}
	switch {
	case s.Location["page"] != nil:
		where += " p." + str("page")
	case s.Location["slide"] != nil:
		where += " slide " + str("slide")
	case s.Location["sheet"] != nil:
		where += " sheet " + str("sheet")
	case s.Location["chapter"] != nil:
		where += " chapter " + str("chapter")
	case s.Location["time_offset"] != nil:
		var sec float64
		_ = json.Unmarshal(s.Location["time_offset"], &sec)
		where += fmt.Sprintf(" %d:%02d", int(sec)/60, int(sec)%60)
	}
	return where
}

// snippetLine writes the snippet on one line, matches in [brackets].
func snippetLine(s search.Snippet) string {
	var b strings.Builder
	for _, p := range s.Parts {
		t := strings.Join(strings.Fields(p.Text), " ")
		if strings.HasPrefix(p.Text, " ") || strings.HasPrefix(p.Text, "\n") {
			t = " " + t
		}
		if strings.HasSuffix(p.Text, " ") || strings.HasSuffix(p.Text, "\n") {
			t += " "
		}
		if p.Match {
			b.WriteString("[" + t + "]")
		} else {
			b.WriteString(t)
		}
	}
	return strings.TrimSpace(b.String())
}

// humanSize writes bytes in B, KB, MB, GB, TB (powers of 1000).
func humanSize(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KB", "MB", "GB", "TB"} {
		f /= 1000
		if f < 1000 || u == "TB" {
			if f < 10 {
				return fmt.Sprintf("%.1f %s", f, u)
			}
			return fmt.Sprintf("%.0f %s", f, u)
		}
	}
	return ""
}
