package main

import (
	"context"

	"encoding/json"
	"fmt"
	"github.com/homeindex/homeindex/internal/app"
	"strings"

	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/protocol"
)

func cmdSearch(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "search", "search [--filter F] [--sort S] [--limit N] [--offset N] [--json] [QUERY]\n\nSearches the files index (Meilisearch filter syntax, e.g. --filter 'type = \"text/plain\" AND size > 100').")
	filter := fs.String("filter", "", "filter expression (Meilisearch syntax)")
	sortBy := fs.String("sort", "", "comma-separated sort, e.g. mtime:desc")
	limit := fs.Int("limit", 20, "maximum hits")
	offset := fs.Int("offset", 0, "hits to skip")
	asJSON := fs.Bool("json", false, "print hits as JSON lines")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *limit < 1 || *offset < 0 {
		return usageError{"search: --limit must be ≥ 1 and --offset ≥ 0"}
	}
	cfg, _, err := loadConfig(e)
	if err != nil {
		return err
	}
	idx, err := app.OpenIndex(ctx, cfg)
	if err != nil {
		return err
	}
	defer idx.Close()
	q := search.Query{Q: strings.Join(fs.Args(), " "), Filter: *filter, Limit: *limit, Offset: *offset}
	if *sortBy != "" {
		q.Sort = strings.Split(*sortBy, ",")
	}
	res, err := idx.Files().Search(ctx, q)
	if err != nil {
		return err
	}
	if res, err = contentHits(ctx, idx, q, res); err != nil {
		return err
	}
	if *asJSON {
		for _, h := range res.Hits {
			fmt.Fprintln(e.stdout, string(h))
		}
		return nil
	}
	fmt.Fprintf(e.stdout, "%d hits\n", res.Total)
	for _, h := range res.Hits {
		var d protocol.Document
		if err := json.Unmarshal(h, &d); err != nil {
			fmt.Fprintln(e.stdout, string(h))
			continue
		}
		first := ""
		if len(d.Paths) > 0 {
			first = protocol.LineName(d.Paths[0].Path) // one line, whatever the name holds
		}
		more := ""
		if d.Copies > 1 {
			more = fmt.Sprintf(" (+%d copies)", d.Copies-1)
		}
		off := ""
		if d.Offline {
			off = " [offline]"
		}
		fmt.Fprintf(e.stdout, "%s  %-24s %10d  %s%s%s\n", d.ID, d.Type, d.Size, first, more, off)
	}
	return nil
}
