package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Worker serves one module's queues with a Handler, one job at a time. Several workers, in one
// process or many, may serve the same module.
type Worker struct {
	cfg       Config
	h         Handler
	log       zerolog.Logger
	out       io.Writer // cfg.Log, safe for concurrent writes
	rdb       *redis.Client
	keys      struct{ check, run string }
	claimKeys []string // claimScript's KEYS
	timeout   string   // cfg.Timeout in seconds, for the scripts
	shares    *shares  // nil without resource-share groups
	// directMarker is protocol.ItemUIDMarker(cfg.UID) when the handler's Check always says yes
	// (HandlerFuncs with no CheckFunc): claimScript takes the check items holding it straight
	// into their run. "" otherwise.
	directMarker string
	waitCheck    *listWaiter
	waitRun      *listWaiter
	health       redisHealth
	served       atomic.Bool

	// Owned by the goroutine running Serve.
	inPhase  bool            // Load was called and Unload is due
	jobCtx   context.Context // handlers' parent: ends ShutdownGrace after Serve's ctx ends
	serveCtx context.Context // Serve's: once it ends, a finish takes no next item
	next     *lease          // the item the last finish took (finishClaimScript), for the next step
}

// NewWorker checks cfg, applies its defaults and returns a Worker ready to Serve. It returns
// an error wrapping ErrMisconfigured when cfg.UID disagrees with cfg.Modules, and a
// *ConfigError for invalid values. It does not contact Redis.
func NewWorker(cfg Config, h Handler) (*Worker, error) {
	if h == nil {
		return nil, errors.New("sdk: nil Handler")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	rdb, err := newRedisClient(cfg)
	if err != nil {
		return nil, err
	}
	out := zerolog.SyncWriter(cfg.Log)
	w := &Worker{
		cfg:     cfg,
		h:       h,
		out:     out,
		rdb:     rdb,
		timeout: seconds(cfg.Timeout),
		log: zerolog.New(out).Level(cfg.LogLevel).With().Timestamp().
			Str("module", cfg.Module).Str("worker", cfg.WorkerID).Logger(),
	}
	w.keys.check, w.keys.run = protocol.CheckKey(cfg.Module), protocol.RunKey(cfg.Module)
	if y, ok := h.(interface{ alwaysYes() bool }); ok && y.alwaysYes() {
		w.directMarker = protocol.ItemUIDMarker(cfg.UID)
	}
	w.waitCheck, w.waitRun = newListWaiter(rdb, w.keys.check), newListWaiter(rdb, w.keys.run)
	w.claimKeys = []string{w.keys.check, protocol.ProcessingKey(w.keys.check), w.keys.run,
		protocol.ProcessingKey(w.keys.run), protocol.TimeoutsKey}
	if len(cfg.Shares) > 0 {
		w.shares = newShares(w)
		w.claimKeys = append(w.claimKeys, w.shares.lists...)
	}
	return w, nil
}

// Config returns the worker's configuration with its defaults applied.
func (w *Worker) Config() Config { return w.cfg }

// Serve takes and processes jobs until ctx ends, then stops: it takes no more work, lets the
// current job finish for up to ShutdownGrace (then cancels it and hands its item back to the
// head of its queue), unloads, leaves its share groups and returns nil. Redis outages are
// logged and waited out. It returns an error only when Load or Unload fails, or when Redis
// refuses the worker (wrong credentials, missing ACL permissions, a certificate that does not
// verify), which no retry can fix. Serve may be called once. A handler that ignores its
// context may still be running when Serve returns (its item was handed back; Main then exits).
func (w *Worker) Serve(ctx context.Context) error {
	if !w.served.CompareAndSwap(false, true) {
		return errors.New("sdk: Serve called twice on one Worker")
	}
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	w.jobCtx, w.serveCtx = jobCtx, ctx
	var graceTimer atomic.Pointer[time.Timer]
	stopAfter := context.AfterFunc(ctx, func() { graceTimer.Store(time.AfterFunc(w.cfg.ShutdownGrace, cancelJobs)) })
	defer func() {
		stopAfter()
		if t := graceTimer.Load(); t != nil {
			t.Stop()
		}
	}()

	bg, stopBg := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { w.waitCheck.run(bg) })
	wg.Go(func() { w.waitRun.run(bg) })
	if w.shares != nil {
		wg.Go(func() { w.shares.heartbeat(bg) })
	}
	ev := w.log.Info().Str("redis", w.cfg.Redis.String()).Str("uid", w.cfg.UID).Dur("timeout", w.cfg.Timeout)
	if w.shares != nil {
		ev = ev.Strs("shares", w.shares.groups).Dur("slice", w.shares.slice)
	}
	ev.Msg("worker started")

	err := w.loop(ctx)
	w.handBackNext()

	// Stopping: the loop has finished or handed back its item.
	cleanup, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if uerr := w.endPhase(cleanup); uerr != nil && err == nil {
		err = uerr
	}
	if w.shares != nil {
		if rerr := w.shares.release(cleanup); rerr != nil {
			w.log.Warn().Err(rerr).Msg("could not leave share groups: their entries expire after the TTL")
		}
	}
	cancel()
	stopBg()
	_ = w.rdb.Close() // ends blocked waits at once
	wg.Wait()
	var fe *fatalError
	if errors.As(err, &fe) {
		err = fe.err
	}
	if err != nil {
		w.log.Error().Err(err).Msg("worker stopped")
		return err
	}
	w.log.Info().Msg("worker stopped")
	return nil
}

// fatalError ends Serve: Load or Unload failed, or Redis refused the worker (refused).
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }

// loop runs steps until ctx ends; Redis errors are logged once per outage and backed off.
func (w *Worker) loop(ctx context.Context) error {
	var bo backoff
	for ctx.Err() == nil {
		progress, kind, err := w.step(ctx)
		var fe *fatalError
		switch {
		case errors.As(err, &fe):
			return err
		case err != nil && refused(err) != nil && ctx.Err() == nil:
			return &fatalError{refused(err)} // wrong credentials, ACL or certificate: retrying cannot help
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			w.health.failed(w.log, err)
			w.log.Debug().Err(err).Msg("step failed")
			sleepCtx(ctx, bo.next())
			continue
		}
		bo.reset()
		w.health.ok(w.log)
		if !progress {
			w.wait(ctx, kind)
		}
	}
	return nil
}

// step does one unit of work: a check if one waits (checks need no tokens), else a run if
// this worker is in a run phase (holding its share tokens); otherwise it decides whether to
// start a phase, or reports what to wait for.
func (w *Worker) step(ctx context.Context) (progress bool, kind waitKind, err error) {
	mayRun := w.mayRun()
	l, st, err := w.nextItem(ctx, mayRun)
	switch {
	case err != nil:
		return false, 0, err
	case st == claimed && l.queue == w.keys.check:
		if w.directMarker != "" && w.shares == nil && !w.inPhase && strings.Contains(l.item, w.directMarker) {
			// A check of its own that must say yes starts the run phase, so the item runs now
			// and the claims after it take items straight into their run.
			if err := w.startPhase(ctx); err != nil {
				return true, 0, errors.Join(err, w.handBack(l, w.log))
			}
		}
		return true, 0, w.doCheck(l)
	case st == claimed:
		return true, 0, w.doRun(l)
	case st == claimNotHolder:
		w.shares.lost()
		return true, 0, w.endPhase(ctx)
	case mayRun: // nothing to check, nothing to run: the phase is over
		if err := w.endPhase(ctx); err != nil {
			return false, 0, err
		}
		if w.shares != nil {
			return false, waitIdle, w.shares.release(ctx)
		}
		return false, waitIdle, nil
	}
	// Nothing to check and not running: start a run phase if there is run work and a turn.
	if w.shares != nil {
		turn, err := w.shares.turn(ctx)
		if err != nil {
			return false, 0, err
		}
		switch turn {
		case turnIdle:
			return false, waitIdle, w.endPhase(ctx)
		case turnWaiting:
			return false, waitToken, w.endPhase(ctx)
		case turnYield:
			if err := w.endPhase(ctx); err != nil {
				return false, 0, err
			}
			return true, 0, w.shares.release(ctx)
		}
	} else {
		n, err := w.rdb.LLen(ctx, w.keys.run).Result()
		if err != nil {
			return false, 0, fmt.Errorf("look at %s: %w", w.keys.run, err)
		}
		if n == 0 {
			return false, waitIdle, w.endPhase(ctx)
		}
	}
	return true, 0, w.startPhase(ctx)
}

// mayRun reports whether the next claim may take a run: in a run phase, holding every share
// token within the current slice.
func (w *Worker) mayRun() bool {
	if !w.inPhase {
		return false
	}
	return w.shares == nil || (w.shares.holding.Load() && time.Since(w.shares.since) < w.shares.slice)
}

// startPhase calls Load when a run phase begins.
func (w *Worker) startPhase(ctx context.Context) error {
	if w.inPhase {
		return nil
	}
	if l, ok := w.h.(Loader); ok {
		w.log.Debug().Msg("load")
		if err := protect(func() error { return l.Load(ctx) }); err != nil {
			return &fatalError{fmt.Errorf("load: %w", err)}
		}
	}
	w.inPhase = true
	return nil
}

// endPhase calls Unload when a run phase ends.
func (w *Worker) endPhase(ctx context.Context) error {
	if !w.inPhase {
		return nil
	}
	w.inPhase = false
	if u, ok := w.h.(Unloader); ok {
		w.log.Debug().Msg("unload")
		if err := protect(func() error { return u.Unload(ctx) }); err != nil {
			return &fatalError{fmt.Errorf("unload: %w", err)}
		}
	}
	return nil
}

// protect turns a panic in fn into an error.
func protect(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn()
}
