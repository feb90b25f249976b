package main

import (
	"context"

	"fmt"
	"github.com/homeindex/homeindex/internal/app"
	"sync"
	"time"

	"github.com/homeindex/homeindex/internal/httpapi"
	"github.com/homeindex/homeindex/internal/logging"
	"github.com/homeindex/homeindex/internal/ops"
	"github.com/homeindex/homeindex/internal/scheduler"
	"github.com/homeindex/homeindex/internal/search"
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

	pipe := a.NewPipeline() // nil without MODULES
	checks := []httpapi.Check{{Name: "catalog", Fn: a.Catalog.Ping}}
	if pipe != nil {
		checks = append(checks, httpapi.Check{Name: "redis", Fn: pipe.Ping})
		if err := pipe.Pauses().Load(ctx); err != nil {
			return err
		}
	}
	var sched *scheduler.Scheduler
	requestSync, triggerSync := syncHooks(&sched, a)
	opsSvc := ops.New(ops.Config{Version: version, RequestSync: requestSync, TriggerSync: triggerSync},
		a, pipe, logging.Component(log, "ops"))
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

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	follow := &followUps{settle: cfg.Watch.Settle}
	sched = scheduler.New(cfg.Schedule, func(ctx context.Context, reason string) error {
		st, err := a.SyncOnce(ctx, reason)
		if pipe != nil {
			pipe.Wake()
		}
		follow.after(sched, st.Unsettled)
		return err
	}, logging.Component(log, "scheduler"))
	watcher := a.NewWatcher(sched.Trigger)

	var wg sync.WaitGroup
	errc := make(chan error, 6)
	spawn := func(name string, fn func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(); err != nil {
				errc <- fmt.Errorf("%s: %w", name, err)
			}
		}()
	}
	spawn("scheduler", func() error { return sched.Run(ctx) })
	spawn("outbox", func() error { return a.Outbox.Run(ctx) })
	spawn("purge", func() error { return a.RunPurge(ctx) }) // missing documents past MISSING_RETENTION
	opsSvc.SetSyncRequester(sched.Trigger)
	spawn("watcher", func() error { return watcher.Run(ctx) })
	if srv != nil {
		spawn("http", srv.Serve)
	}
	if pipe != nil {
		spawn("pipeline", func() error { return pipe.Run(ctx) })
		spawn("ops", func() error { return opsSvc.Run(ctx) })
	}

	var runErr error
	select {
	case <-ctx.Done():
		log.Info().Msg("stopping")
	case runErr = <-errc:
		log.Error().Err(runErr).Msg("component failed; stopping")
	}
	cancel()
	if srv != nil {
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		_ = srv.Shutdown(sctx)
		scancel()
	}
	wg.Wait()
	log.Info().Msg("stopped")
	return runErr
}
