package main

import (
	"context"
	"fmt"
	"time"

	"github.com/homeindex/homeindex/internal/app"
	"github.com/homeindex/homeindex/internal/httpapi"
	"github.com/homeindex/homeindex/internal/logging"
	"github.com/homeindex/homeindex/internal/ops"
	"github.com/homeindex/homeindex/internal/scheduler"
	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/internal/supervise"
)

// shutdownTimeout bounds how long a stop waits for the HTTP server.
const shutdownTimeout = 10 * time.Second

func cmdRun(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "run", "run\n\nStart-up sync, then a sync on every CRON_EXPRESSION tick and shortly after any change in the\ntree (inotify watches, or re-walks past WATCH_LIMIT); SIGTERM or SIGINT stop it cleanly.")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"run: unexpected arguments"}
	}
	cfg, log, err := loadConfig(e)
	if err != nil {
		return err
	}
	if err := cfg.CheckIndexDirectory(); err != nil {
		return err // before anything is created
	}
	log.Info().Str("version", version).Str("index_directory", cfg.IndexDirectory).
		Str("metadata_directory", cfg.MetadataDirectory).Str("archive_directory", cfg.ArchiveDirectory).
		Str("state_directory", cfg.StateDirectory).Str("cron", cfg.CronExpression).
		Str("search", cfg.Meilisearch.String()).Strs("modules", cfg.ModuleNames()).Msg("starting homeindexd")
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	holdStateLock(a)
	if err := a.ImportLegacy(ctx); err != nil {
		return err
	}

	rates := ops.NewRates(time.Now())
	pipe := a.NewPipeline(rates.Finished) // nil without MODULES
	checks := []httpapi.Check{{Name: "catalog", Fn: a.Catalog.Ping}}
	opsCfg := ops.Config{Version: version, Daemon: cfg, Catalog: a.Catalog, Files: a, Outbox: a.Outbox, Rates: rates}
	if pipe != nil {
		checks = append(checks, httpapi.Check{Name: "redis", Fn: pipe.Ping})
		if err := pipe.Pauses().Load(ctx); err != nil {
			return err
		}
		opsCfg.Pipeline = pipe
	}
	var sched *scheduler.Scheduler
	opsCfg.RequestSync, opsCfg.TriggerSync = syncHooks(&sched, a)
	opsSvc := ops.New(opsCfg, logging.Component(log, "ops"))
	var srv *httpapi.Server
	if cfg.HTTPAddr != "" {
		opts := []httpapi.Option{
			httpapi.WithOps(opsSvc, search.IndexSearcher{Index: a.Index, Facets: app.FacetAttributes(cfg), Drives: a.Catalog.Drives}, logging.Component(log, "http")),
			httpapi.WithFiles(httpapi.Library{Docs: a.Catalog, IndexDir: cfg.IndexDirectory,
				ArchiveRel: cfg.ArchiveRel, MetadataDir: cfg.MetadataDirectory}),
			httpapi.WithAuth(httpapi.AuthMode{Token: cfg.HTTPToken,
				CheckHost: cfg.HTTPToken == "" && !cfg.HTTPInsecureNoAuth}),
		}
		if cfg.HTTPToken != "" {
			log.Info().Msg("HTTP requires the HTTP_TOKEN (Bearer, or as the Basic password)")
		} else if cfg.HTTPInsecureNoAuth {
			log.Warn().Str("addr", cfg.HTTPAddr).Msg("HTTP_INSECURE_NO_AUTH is on: anyone who reaches HTTP_ADDR can read your files")
		}
		if cfg.HTTPPprof {
			opts = append(opts, httpapi.WithPprof())
			log.Warn().Msg("HTTP_PPROF is on: /debug/pprof/ is served")
		}
		srv, err = httpapi.New(cfg.HTTPAddr, checks, opts...)
		if err != nil {
			return fmt.Errorf("http: %w", err)
		}
		log.Info().Str("addr", srv.Addr()).Msg("http listening")
	}

	follow := &followUps{settle: cfg.Watch.Settle}
	afterSync := a.BeginDaemonFirstLoad(ctx) // a first start: the index loads until the first sync is in
	sched = scheduler.New(cfg.Schedule, func(ctx context.Context, reason string) error {
		st, err := a.SyncOnce(ctx, reason)
		if pipe != nil {
			pipe.Wake()
		}
		afterSync(ctx)
		follow.after(sched, st.Unsettled)
		return err
	}, logging.Component(log, "scheduler"))
	watcher := a.NewWatcher(sched.Trigger)

	// Shutdown order: the group stops the last added first (supervise). So intake stops
	// first (HTTP, then the watcher and the scheduler: no new syncs), then the operator's
	// trimming and the module pipeline (which gives the Redis lock back), and the outbox
	// last, so that it writes out what the syncs and merges committed before it stops.
	var g supervise.Group
	g.Add("outbox", a.Outbox.Run)
	g.Add("purge", a.RunPurge) // missing documents past MISSING_RETENTION
	if pipe != nil {
		g.Add("pipeline", pipe.Run)
		g.Add("ops", opsSvc.Run)
	}
	g.Add("scheduler", sched.Run)
	g.Add("watcher", watcher.Run)
	if srv != nil {
		g.AddServer("http", srv.Serve, func() {
			sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
			defer scancel()
			_ = srv.Shutdown(sctx)
		})
	}
	stopping := context.AfterFunc(ctx, func() { log.Info().Msg("stopping") })
	err = g.Run(ctx)
	stopping()
	if err != nil {
		log.Error().Err(err).Msg("component failed; stopped the others")
	}
	log.Info().Msg("stopped")
	return err
}
