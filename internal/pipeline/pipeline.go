// Package pipeline runs the module pipeline while this daemon holds the Redis lock: it takes
// the lock (a second daemon on the same Redis waits as a standby), checks Redis's epoch
// against the catalog's (Redis lost its data: re-dispatch what was in flight), reconciles a
// changed MODULES list, gives parked jobs another run at start, and supervises the dispatcher,
// reaper and merger. It talks to Redis only through the queue package.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/internal/dispatch"
	"github.com/homeindex/homeindex/internal/logging"
	"github.com/homeindex/homeindex/internal/merge"
	"github.com/homeindex/homeindex/internal/metadata"
	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/internal/reaper"
	"github.com/homeindex/homeindex/internal/state"
	"github.com/homeindex/homeindex/internal/supervise"
)

// Lock timing: the active daemon renews every lockTTL/3; a standby takes over within lockTTL
// of the active one dying.
const (
	lockTTL       = 15 * time.Second
	epochEvery    = 5 * time.Second
	metaEpochKey  = "redis_epoch"
	connectBackof = 5 * time.Second
)

// Config is what New needs. Daemon, Catalog, Store and Outbox are required.
type Config struct {
	// Daemon is the daemon's configuration: MODULES, the pipeline settings, Redis and
	// STATE_DIRECTORY.
	Daemon  *config.Config
	Catalog *catalog.Catalog
	Store   *metadata.Store
	// Outbox is woken when the pipeline changed documents (merges, MODULES changes).
	Outbox interface{ Wake() }
	Log    zerolog.Logger
	// Predecessor, when set, returns the Redis lock token of this state directory's previous
	// homeindexd when that process is certainly dead ("" otherwise), whether this process
	// holds the state directory until release, and a release func called when Run ends; Run
	// then takes that lock over at once instead of waiting out its TTL.
	Predecessor func() (token string, owns bool, release func())
	// OnFinished, when set, is called after each job the merger finishes (merged, or parked
	// on a module-reported failure). It must not block.
	OnFinished func(module, docID string)
}

// Pipeline runs the module pipeline: dispatcher, reaper and merger, while this daemon holds
// the Redis lock.
type Pipeline struct {
	cfg   Config
	log   zerolog.Logger
	owner string
	// Set once running; read from other goroutines (HTTP, scheduler), hence atomic.
	qp        atomic.Pointer[queue.Client]
	dp        atomic.Pointer[dispatch.Dispatcher]
	rp        atomic.Pointer[reaper.Reaper]
	mp        atomic.Pointer[merge.Merger]
	ready     chan struct{}
	readyOnce sync.Once
	pauses    *dispatch.Pauses
	cond      atomic.Pointer[Condition]
}

// Pauses is the set of paused modules (persisted in the catalog; Load it before Run).
func (p *Pipeline) Pauses() *dispatch.Pauses { return p.pauses }

// Queue, Dispatcher, Reaper and Merger return the running parts (nil before Ready).
func (p *Pipeline) Queue() *queue.Client             { return p.qp.Load() }
func (p *Pipeline) Dispatcher() *dispatch.Dispatcher { return p.dp.Load() }
func (p *Pipeline) Reaper() *reaper.Reaper           { return p.rp.Load() }
func (p *Pipeline) Merger() *merge.Merger            { return p.mp.Load() }
func (p *Pipeline) q() *queue.Client                 { return p.qp.Load() }

// New builds the pipeline for the configured modules (nil when there are none).
func New(cfg Config) *Pipeline {
	if len(cfg.Daemon.Modules) == 0 {
		return nil
	}
	if cfg.Predecessor == nil {
		cfg.Predecessor = func() (string, bool, func()) { return "", false, func() {} }
	}
	host, _ := os.Hostname()
	return &Pipeline{cfg: cfg, log: logging.Component(cfg.Log, "pipeline"),
		owner: fmt.Sprintf("%s:%d:%d", host, os.Getpid(), time.Now().UnixNano()), ready: make(chan struct{}),
		pauses: dispatch.NewPauses(cfg.Catalog)}
}

// Owner is the token this daemon takes the Redis lock with (host:pid:start).
func (p *Pipeline) Owner() string { return p.owner }

// DriveAppeared tells the running dispatcher that a drive became present, so its jobs go
// before the ones not yet started (filesync.Config.DriveAppeared).
func (p *Pipeline) DriveAppeared() {
	if d := p.Dispatcher(); d != nil {
		d.DriveAppeared()
	}
}

// Condition is why the pipeline is not running (yet), and since when: Redis unreachable,
// another daemon holding the lock, preparing the queues. Reason is "" while it runs.
type Condition struct {
	Reason string
	Since  time.Time
}

// Condition returns the pipeline's current condition.
func (p *Pipeline) Condition() Condition {
	if c := p.cond.Load(); c != nil {
		return *c
	}
	return Condition{Reason: "connecting to Redis"}
}

// setCondition records a new reason; the since-time stays while the reason does not change.
func (p *Pipeline) setCondition(reason string) {
	if c := p.cond.Load(); c != nil && c.Reason == reason {
		return
	}
	p.cond.Store(&Condition{Reason: reason, Since: time.Now()})
}

// Ready is closed once the pipeline holds the lock and runs.
func (p *Pipeline) Ready() <-chan struct{} { return p.ready }

// Wake asks the dispatcher for a full pass (after a sync, when Redis lost its data).
func (p *Pipeline) Wake() {
	if d := p.Dispatcher(); d != nil {
		d.WakeAll()
	}
}

// Run connects to Redis, waits for the daemon lock (a second daemon on the same Redis is a
// standby), prepares Redis from the catalog and runs the loops until ctx ends.
func (p *Pipeline) Run(ctx context.Context) error {
	p.setCondition("connecting to Redis")
	q, err := p.connect(ctx)
	if err != nil || q == nil {
		if err != nil {
			p.setCondition("redis refused: " + err.Error())
		}
		return err
	}
	p.qp.Store(q)
	defer q.Close()
	stateDir := p.cfg.Daemon.StateDirectory
	prev, owns, release := p.cfg.Predecessor()
	defer release()
	record := func() {
		if err := recordOwner(stateDir, p.owner); err != nil {
			p.log.Warn().Err(err).Msg("lock owner not recorded; a restart after a crash will wait for the lock to expire")
		}
	}
	// Holding the state directory, the token is recorded before the lock is tried, not after
	// it is taken: a daemon killed between the two would otherwise leave its successor to wait
	// out the lock's TTL. A token recorded but never holding the lock takes nothing over:
	// TakeOverLock only takes a lock that very token holds. Without the directory (another
	// live process has it), the file is that process's and is written only once the lock is
	// ours.
	if owns {
		record()
	}
	for ctx.Err() == nil {
		ok, err := q.TakeOverLock(ctx, prev, p.owner, lockTTL)
		if ok {
			p.log.Info().Str("previous", prev).Msg("the Redis lock was held by this state directory's previous homeindexd, now gone: taking over at once")
		}
		prev = "" // only at start: later the holder may be anyone
		if err == nil && !ok {
			ok, err = q.AcquireLock(ctx, p.owner, lockTTL)
		}
		if err == nil && !ok {
			holder, _, _ := q.LockHolder(ctx)
			p.setCondition("standby: another homeindexd holds the Redis lock (" + holder + ")")
			p.log.Info().Str("holder", holder).Msg("standby: another homeindexd holds the Redis lock; waiting to take over")
			err = q.WaitLock(ctx, p.owner, lockTTL, time.Second)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			p.setCondition("redis unreachable: " + err.Error())
			p.log.Warn().Err(err).Msg("daemon lock not taken; retrying")
			if !supervise.Sleep(ctx, connectBackof) {
				return nil
			}
			continue
		}
		if !owns {
			record()
		}
		p.log.Info().Str("owner", p.owner).Msg("holding the Redis lock: this daemon is active")
		err = p.active(ctx)
		if ctx.Err() != nil {
			_ = q.ReleaseLock(context.WithoutCancel(ctx), p.owner)
			return nil
		}
		if errors.Is(err, queue.ErrLockLost) {
			p.log.Warn().Msg("daemon lock lost: another homeindexd took over; back to standby")
			continue
		}
		// Redis went away or the catalog failed mid-way: the file sync goes on; the pipeline
		// starts over (lock, epoch, module changes) once Redis answers again.
		p.setCondition("module pipeline stopped: " + err.Error())
		p.log.Warn().Err(err).Dur("retry_in", connectBackof).Msg("module pipeline stopped; restarting it")
		_ = q.ReleaseLock(context.WithoutCancel(ctx), p.owner)
		if !supervise.Sleep(ctx, connectBackof) {
			return nil
		}
	}
	return nil
}

// connect dials Redis until it answers or ctx ends, logging once per outage.
func (p *Pipeline) connect(ctx context.Context) (*queue.Client, error) {
	opts := queue.Options{Endpoint: p.cfg.Daemon.Redis}
	logged := false
	for {
		q, err := queue.Connect(ctx, opts, p.cfg.Log)
		if err == nil {
			return q, nil
		}
		if errors.Is(err, queue.ErrRedisTooOld) {
			return nil, err
		}
		if rerr := queue.Refused(err); rerr != nil {
			return nil, rerr // wrong credentials, ACL or certificate: retrying cannot help
		}
		p.setCondition("redis unreachable at " + opts.String() + ": " + err.Error())
		if !logged {
			p.log.Warn().Err(err).Str("redis", opts.String()).Msg("redis unreachable; retrying every 5 s")
			logged = true
		}
		if !supervise.Sleep(ctx, connectBackof) {
			return nil, nil
		}
	}
}

// active prepares Redis and runs the loops while the lock is held. The loops stop in the
// reverse order they are added (supervise.Group): the dispatcher stops pushing jobs first,
// then the reaper and the merger, then the epoch watch, and the lock renewal last.
func (p *Pipeline) active(ctx context.Context) error {
	p.setCondition("preparing the queues (epoch, MODULES changes, parked jobs)")
	if err := p.checkEpoch(ctx); err != nil {
		return err
	}
	if err := p.applyModuleChanges(ctx); err != nil {
		return err
	}
	if err := p.retryParked(ctx); err != nil {
		return err
	}
	cfg := p.cfg.Daemon
	policy := queue.RetryPolicy{MaxAttempts: cfg.Pipeline.MaxAttempts, Base: cfg.Pipeline.RetryBase, Max: cfg.Pipeline.RetryMax}
	var mods []dispatch.Module
	var qmods []queue.Module
	for _, m := range cfg.Modules {
		w := m.Window
		if w == 0 {
			w = cfg.Pipeline.DispatchWindow
		}
		mods = append(mods, dispatch.Module{Name: m.Name, UID: m.UID, Window: w})
		qmods = append(qmods, queue.Module{Name: m.Name, UID: m.UID})
	}
	names := cfg.ModuleNames()
	q := p.q()
	disp := dispatch.New(dispatch.Config{Modules: mods, Pauses: p.pauses}, p.cfg.Catalog, q, logging.Component(p.cfg.Log, "dispatch"))
	reap := reaper.New(reaper.Config{Modules: qmods, Pipeline: names, Policy: policy, Interval: cfg.Pipeline.ReapInterval,
		OnChange: func() { disp.WakeAll(); p.cfg.Outbox.Wake() }},
		q, p.cfg.Catalog, logging.Component(p.cfg.Log, "reaper"))
	merger := merge.New(merge.Config{Pipeline: names, Policy: policy, OnMerged: func(id, module string) {
		disp.Wake()
		p.cfg.Outbox.Wake()
		p.log.Debug().Str("module", module).Str("id", id).Msg("job finished")
		if p.cfg.OnFinished != nil {
			p.cfg.OnFinished(module, id)
		}
	}}, q, p.cfg.Catalog, p.cfg.Store, logging.Component(p.cfg.Log, "merge"))
	p.dp.Store(disp)
	p.rp.Store(reap)
	p.mp.Store(merger)

	var g supervise.Group
	g.Add("lock", p.keepLock)
	g.Add("epoch", p.watchEpoch)
	g.Add("merger", merger.Run)
	g.Add("reaper", reap.Run)
	g.Add("dispatcher", disp.Run)
	p.setCondition("")
	p.readyOnce.Do(func() { close(p.ready) })
	return g.Run(ctx)
}

// keepLock renews the lock; losing it stops the loops (ErrLockLost).
func (p *Pipeline) keepLock(ctx context.Context) error {
	return every(ctx, lockTTL/3, func() error {
		if err := p.q().RenewLock(ctx, p.owner, lockTTL); errors.Is(err, queue.ErrLockLost) {
			return err
		} else if err != nil && ctx.Err() == nil {
			p.log.Warn().Err(err).Msg("lock not renewed; retrying")
		}
		return nil
	})
}

// watchEpoch notices Redis losing its data while we run.
func (p *Pipeline) watchEpoch(ctx context.Context) error {
	return every(ctx, epochEvery, func() error {
		if err := p.checkEpoch(ctx); err != nil && ctx.Err() == nil {
			p.log.Warn().Err(err).Msg("epoch check failed; retrying")
		}
		return nil
	})
}

// every calls fn every d until ctx ends (nil) or fn returns an error (that error).
func every(ctx context.Context, d time.Duration, fn func() error) error {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := fn(); err != nil {
			return err
		}
	}
}

// checkEpoch compares Redis's epoch with the one the catalog remembers. A different one means
// Redis lost its data (FLUSHALL, a restart without persistence, a new host): every job the
// catalog had in flight is dispatched again.
func (p *Pipeline) checkEpoch(ctx context.Context) error {
	epoch, _, err := p.q().Epoch(ctx)
	if err != nil {
		return err
	}
	known, _, err := p.cfg.Catalog.Meta(ctx, metaEpochKey)
	if err != nil || known == epoch {
		return err
	}
	if known != "" {
		n, err := p.cfg.Catalog.DeleteQueuedJobs(ctx)
		if err != nil {
			return err
		}
		p.log.Warn().Int64("jobs", n).Msg("redis lost its data (epoch changed): re-dispatching every job in flight from the catalog")
		p.Wake()
	}
	return p.cfg.Catalog.Update(ctx, func(t *catalog.Tx) error { return t.SetMeta(ctx, metaEpochKey, epoch) })
}

// applyModuleChanges compares MODULES with modules_state.json: documents whose progress passed
// the first changed position go back to that module (their drives flip to pending), queue items
// carrying an old uid are purged, a removed module's waiting documents move on. An unchanged
// list changes nothing and writes nothing to the queues.
func (p *Pipeline) applyModuleChanges(ctx context.Context) error {
	cfg := p.cfg.Daemon
	var cur []state.Module
	for _, m := range cfg.Modules {
		cur = append(cur, state.Module{Name: m.Name, UID: m.UID})
	}
	prev, found, err := state.Load(cfg.StateDirectory)
	if err != nil {
		return err
	}
	plan := state.Diff(prev, cur)
	if !plan.Unchanged || !found {
		nexts, err := p.cfg.Catalog.NextValues(ctx)
		if err != nil {
			return err
		}
		for from := range nexts {
			to := plan.Rewind(prev, cur, from)
			if !found {
				// First start with modules (no state file): every file goes through the
				// chain, except those already waiting on a configured module.
				to = from
				if !slices.Contains(cfg.ModuleNames(), from) {
					to = cur[0].Name
				}
			}
			if to == from {
				continue
			}
			n, err := p.cfg.Catalog.MoveNext(ctx, from, to)
			if err != nil {
				return err
			}
			p.log.Info().Str("from", from).Str("to", to).Int("documents", n).Msg("requeued documents for changed MODULES")
		}
		for _, name := range plan.Removed {
			if _, err := p.cfg.Catalog.DeleteModuleJobs(ctx, name, ""); err != nil {
				return err
			}
		}
		for _, name := range plan.UIDChanged {
			if _, err := p.cfg.Catalog.DeleteModuleJobs(ctx, name, catalog.JobQueued); err != nil {
				return err
			}
		}
	}
	for _, m := range cfg.Modules {
		dropped, err := p.q().PurgeUID(ctx, queue.Module{Name: m.Name, UID: m.UID})
		if err != nil {
			return err
		}
		if len(dropped) > 0 {
			p.log.Info().Str("module", m.Name).Int("items", len(dropped)).Msg("purged queue items of another module uid")
			if err := p.cfg.Catalog.Update(ctx, func(t *catalog.Tx) error {
				for _, d := range dropped {
					if err := t.DeleteJob(ctx, d.ID, m.Name); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return err
			}
		}
	}
	p.cfg.Outbox.Wake()
	return state.Save(cfg.StateDirectory, cur)
}

// retryParked gives parked jobs another run at start (and after a uid change, since their
// module changed).
func (p *Pipeline) retryParked(ctx context.Context) error {
	for _, m := range p.cfg.Daemon.Modules {
		if p.pauses.Paused(m.Name) {
			continue // a paused module gets nothing new; `homeindexd retry` after resume
		}
		retried, err := p.q().RetryFailed(ctx, m.Name, nil)
		if err != nil {
			return err
		}
		if len(retried) == 0 {
			continue
		}
		tokens := map[string]string{}
		for _, r := range retried {
			tokens[r.ID] = r.Token
		}
		if err := p.cfg.Catalog.RequeueParked(ctx, m.Name, tokens, time.Now().UnixMilli()); err != nil {
			return err
		}
		p.log.Info().Str("module", m.Name).Int("jobs", len(retried)).Msg("parked jobs run again")
	}
	return nil
}

// Ping checks Redis answers (readiness); an error before the first connection.
func (p *Pipeline) Ping(ctx context.Context) error {
	q := p.q()
	if q == nil {
		return errors.New("not connected yet")
	}
	return q.Ping(ctx)
}
