// Package ops is the operator's side of the daemon: where every module, drive and sync
// stands (Status), parked failures and quarantined results (Failed, ClearFailed) with their
// FAILED_MAX bound, and the actions behind the CLI and the HTTP API: retry, pause, resume and
// requeue. The HTTP API and the metrics collector read it; nothing here talks to Redis but
// through package queue.
package ops

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/internal/dispatch"
	"github.com/homeindex/homeindex/internal/filesync"
	"github.com/homeindex/homeindex/internal/merge"
	"github.com/homeindex/homeindex/internal/pipeline"
	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/internal/reaper"
	"github.com/homeindex/homeindex/internal/watch"
	"github.com/homeindex/homeindex/protocol"
)

// Kind classifies an operator error; the HTTP API maps it to a status code.
type Kind int

// Kinds of operator errors.
const (
	KindBadRequest  Kind = iota + 1 // the request itself is wrong (400)
	KindNotFound                    // no such module, file or document (404)
	KindConflict                    // not now: the module is paused (409)
	KindUnavailable                 // the module pipeline is not running (503)
)

// Error is an operator error with a message meant for the user.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func errorf(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// KindOf returns err's Kind, or 0 for an internal error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// Files is the daemon's file side as the service reads it: the last sync, the running one's
// progress, the missing files and the change watcher (app.App implements it).
type Files interface {
	LastSync(ctx context.Context) (last *filesync.SyncRecord, count, failed int64)
	SyncProgress() filesync.Progress
	Missing(ctx context.Context) (filesync.MissingState, error)
	ConfirmMissing(ctx context.Context) error
	WatchStatus() *watch.Status
}

// Pipeline is the module pipeline as the service reads and steers it (pipeline.Pipeline
// implements it). Its parts are nil until it is Ready.
type Pipeline interface {
	Ready() <-chan struct{}
	Condition() pipeline.Condition
	Queue() *queue.Client
	Dispatcher() *dispatch.Dispatcher
	Reaper() *reaper.Reaper
	Merger() *merge.Merger
	Pauses() *dispatch.Pauses
	// Wake asks the dispatcher for a full pass.
	Wake()
}

// Config is what a Service reads and acts on. Daemon, Catalog, Files and Outbox are required.
type Config struct {
	Version string
	// Daemon is the daemon's configuration (MODULES, directories, FAILED_MAX).
	Daemon  *config.Config
	Catalog *catalog.Catalog
	Files   Files
	// Outbox is woken after a requeue.
	Outbox interface{ Wake() }
	// Pipeline is the module pipeline; nil without MODULES (a nil interface, not a nil
	// pointer in one).
	Pipeline Pipeline
	// Rates counts finished jobs for the throughput figures; the pipeline reports to it
	// (Rates.Finished as pipeline.Config.OnFinished). Nil: a Rates of the Service's own.
	Rates *Rates
	// TrimEvery is how often the FAILED_MAX bound is enforced. Zero means 5 s.
	TrimEvery time.Duration
	// RequestSync runs a sync now and waits for it; TriggerSync asks for one without waiting
	// (POST /api/sync, and after the operator confirms missing files). Nil: no scheduler, the
	// endpoint answers 503.
	RequestSync func(ctx context.Context) error
	TriggerSync func(reason string)
}

// Service answers the operator. Build it with New before the pipeline runs.
type Service struct {
	cfg     Config
	pipe    Pipeline // nil without MODULES
	log     zerolog.Logger
	rates   *Rates
	now     func() time.Time
	started time.Time
	acc     accumulator
	totals  totalsCache

	mu sync.Mutex // serialises the actions that change parked jobs
}

// New builds a Service.
func New(cfg Config, log zerolog.Logger) *Service {
	if cfg.TrimEvery <= 0 {
		cfg.TrimEvery = 5 * time.Second
	}
	now := time.Now()
	if cfg.Rates == nil {
		cfg.Rates = NewRates(now)
	}
	return &Service{cfg: cfg, pipe: cfg.Pipeline, log: log, rates: cfg.Rates, now: time.Now, started: now}
}

// queue is the Redis client while the pipeline is connected, else nil.
func (s *Service) queue() *queue.Client {
	if s.pipe == nil {
		return nil
	}
	return s.pipe.Queue()
}

// activeQueue is the Redis client when this daemon runs the pipeline, else a KindUnavailable
// error.
func (s *Service) activeQueue() (*queue.Client, error) {
	if s.pipe == nil {
		return nil, errorf(KindUnavailable, "no modules are configured (MODULES is empty)")
	}
	if s.pipelineState() != PipelineActive || s.pipe.Dispatcher() == nil {
		return nil, errorf(KindUnavailable, "the module pipeline is not running (Redis unreachable, or this daemon is a standby); try again later")
	}
	return s.pipe.Queue(), nil
}

func (s *Service) checkModule(name string) error {
	if name == "" {
		return errorf(KindBadRequest, "a module name is required")
	}
	if !slices.Contains(s.cfg.Daemon.ModuleNames(), name) {
		return errorf(KindNotFound, "module %q is not configured (MODULES has %v)", name, s.cfg.Daemon.ModuleNames())
	}
	return nil
}

// FailedList is the JSON of GET /api/failed and `homeindexd failed --json`.
type FailedList struct {
	Parked      []Failure         `json:"parked"`
	Quarantined []QuarantineEntry `json:"quarantined"`
	// Totals per module: parked jobs kept, and dropped by the FAILED_MAX bound.
	ParkedTotal   map[string]int64 `json:"parked_total"`
	ParkedDropped map[string]int64 `json:"parked_dropped"`
	// QuarantineTotal and QuarantineDropped cover every module (one list).
	QuarantineTotal   int64 `json:"quarantine_total"`
	QuarantineDropped int64 `json:"quarantine_dropped"`
}

// Failed lists parked jobs (newest first, with their reasons) and quarantined results, of one
// module or of all (module ""), at most limit of each (limit <= 0: all).
func (s *Service) Failed(ctx context.Context, module string, limit int) (*FailedList, error) {
	if module != "" {
		if err := s.checkModule(module); err != nil {
			return nil, err
		}
	}
	out := &FailedList{Parked: []Failure{}, Quarantined: []QuarantineEntry{}, ParkedTotal: map[string]int64{}, ParkedDropped: map[string]int64{}}
	parked, err := s.cfg.Catalog.ParkedJobs(ctx, module, limit)
	if err != nil {
		return nil, err
	}
	for _, p := range parked {
		out.Parked = append(out.Parked, failureOf(p))
	}
	counts, err := s.cfg.Catalog.ModuleParked(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range s.cfg.Daemon.ModuleNames() {
		if module != "" && m != module {
			continue
		}
		out.ParkedTotal[m] = counts[m]
		if out.ParkedDropped[m], err = s.cfg.Catalog.MetaInt(ctx, catalog.MetaParkedDroppedPrefix+m); err != nil {
			return nil, err
		}
	}
	if q := s.queue(); q != nil {
		if out.QuarantineTotal, out.QuarantineDropped, err = q.QuarantineCounts(ctx); err != nil {
			return nil, errorf(KindUnavailable, "quarantine: %v", err)
		}
		n := int(out.QuarantineTotal)
		if limit > 0 && module == "" {
			n = limit
		}
		recs, err := q.QuarantinedNewest(ctx, n)
		if err != nil {
			return nil, errorf(KindUnavailable, "quarantine: %v", err)
		}
		for _, r := range recs {
			e := quarantineEntry(r)
			if module != "" && e.Module != module {
				continue
			}
			if limit > 0 && len(out.Quarantined) >= limit {
				break
			}
			out.Quarantined = append(out.Quarantined, e)
		}
	}
	return out, nil
}

// Cleared says what ClearFailed removed.
type Cleared struct {
	Parked      int64 `json:"parked"`
	Quarantined int64 `json:"quarantined"`
}

// ClearFailed forgets parked jobs and quarantined results of one module, or of all (module
// ""). Parked jobs are not in flight and quarantined results are settled, so nothing running
// is touched; documents keep their failures entry (their history), and a cleared parked job
// no longer runs again at the next start.
func (s *Service) ClearFailed(ctx context.Context, module string) (*Cleared, error) {
	if module != "" {
		if err := s.checkModule(module); err != nil {
			return nil, err
		}
	}
	q, err := s.activeQueue()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &Cleared{}
	for _, m := range s.cfg.Daemon.ModuleNames() {
		if module != "" && m != module {
			continue
		}
		ids := map[string]string{}
		redisIDs, err := q.FailedIDs(ctx, m)
		if err != nil {
			return out, err
		}
		for _, id := range redisIDs {
			ids[id] = ""
		}
		parked, err := s.cfg.Catalog.ParkedJobs(ctx, m, 0)
		if err != nil {
			return out, err
		}
		for _, p := range parked {
			ids[p.DocID] = ""
		}
		if _, err := q.DropFailed(ctx, m, ids); err != nil {
			return out, err
		}
		n, err := s.cfg.Catalog.DropParked(ctx, m, ids, false)
		if err != nil {
			return out, err
		}
		out.Parked += n
	}
	if out.Quarantined, err = q.ClearQuarantine(ctx, module); err != nil {
		return out, err
	}
	s.log.Info().Str("module", module).Int64("parked", out.Parked).Int64("quarantined", out.Quarantined).Msg("failures cleared")
	return out, nil
}

// RetryRequest says which parked jobs to run again.
type RetryRequest struct {
	Module string        `json:"module"` // "" = every module
	File   protocol.Name `json:"file"`   // a document id or a path (exact bytes); "" = every parked job
	All    bool          `json:"all"`    // every parked job (of Module, when given)
}

// Retried says what Retry did.
type Retried struct {
	Retried map[string]int `json:"retried"` // per module
	Total   int            `json:"total"`
	// SkippedPaused names paused modules whose parked jobs were left alone.
	SkippedPaused []string `json:"skipped_paused"`
}

var docIDRE = regexp.MustCompile(`^[0-9a-f]{16}$`)

// Retry sends parked jobs back to their module's queue under a new dispatch token, attempt 1.
// A paused module is refused when named, and skipped otherwise.
func (s *Service) Retry(ctx context.Context, r RetryRequest) (*Retried, error) {
	if r.Module == "" && r.File == "" && !r.All {
		return nil, errorf(KindBadRequest, "say what to retry: --all, --module M or --file ID|PATH")
	}
	if r.Module != "" {
		if err := s.checkModule(r.Module); err != nil {
			return nil, err
		}
		if s.pipe.Pauses().Paused(r.Module) {
			return nil, errorf(KindConflict, "module %s is paused: resume it first", r.Module)
		}
	}
	var ids []string // nil: every parked job
	if r.File != "" {
		id, err := s.resolve(ctx, string(r.File))
		if err != nil {
			return nil, err
		}
		ids = []string{id}
	}
	q, err := s.activeQueue()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &Retried{Retried: map[string]int{}, SkippedPaused: []string{}}
	for _, m := range s.cfg.Daemon.ModuleNames() {
		if r.Module != "" && m != r.Module {
			continue
		}
		if s.pipe.Pauses().Paused(m) {
			out.SkippedPaused = append(out.SkippedPaused, m)
			continue
		}
		retried, err := q.RetryFailed(ctx, m, ids)
		if err != nil {
			return out, err
		}
		if len(retried) == 0 {
			continue
		}
		tokens := make(map[string]string, len(retried))
		for _, x := range retried {
			tokens[x.ID] = x.Token
		}
		if err := s.cfg.Catalog.RequeueParked(ctx, m, tokens, s.now().UnixMilli()); err != nil {
			return out, err
		}
		out.Retried[m] = len(retried)
		out.Total += len(retried)
	}
	s.pipe.Wake()
	s.log.Info().Str("module", r.Module).Str("file", string(r.File)).Int("jobs", out.Total).Msg("parked jobs retried")
	return out, nil
}

// resolve finds a live document by id or by path (relative to INDEX_DIRECTORY or absolute
// under it).
func (s *Service) resolve(ctx context.Context, file string) (string, error) {
	if docIDRE.MatchString(file) {
		if id, err := s.cfg.Catalog.ResolveDocument(ctx, file); err == nil {
			return id, nil
		}
	}
	rel, err := catalog.CleanRelPath(s.cfg.Daemon.IndexDirectory, file)
	if err != nil {
		return "", errorf(KindBadRequest, "%v", err)
	}
	if rel == "" {
		return "", errorf(KindBadRequest, "--file needs a file, not the whole tree")
	}
	id, err := s.cfg.Catalog.ResolveDocument(ctx, rel)
	if errors.Is(err, catalog.ErrNoSuchDocument) {
		return "", errorf(KindNotFound, "no file or document %q in the catalog", file)
	}
	return id, err
}

// PauseResult says what Pause or Resume did.
type PauseResult struct {
	Module  string `json:"module"`
	Paused  bool   `json:"paused"`
	Changed bool   `json:"changed"`
}

// Pause stops new dispatches to a module (jobs already in Redis finish). The state is
// persisted in the catalog and holds across restarts.
func (s *Service) Pause(ctx context.Context, module string) (*PauseResult, error) {
	return s.setPaused(ctx, module, true)
}

// Resume lets a paused module get jobs again, at once.
func (s *Service) Resume(ctx context.Context, module string) (*PauseResult, error) {
	return s.setPaused(ctx, module, false)
}

func (s *Service) setPaused(ctx context.Context, module string, paused bool) (*PauseResult, error) {
	if err := s.checkModule(module); err != nil {
		return nil, err
	}
	changed, err := s.pipe.Pauses().Set(ctx, module, paused)
	if err != nil {
		return nil, err
	}
	if changed {
		s.log.Info().Str("module", module).Bool("paused", paused).Msg("module pause changed")
		if !paused {
			s.pipe.Wake()
		}
	}
	return &PauseResult{Module: module, Paused: paused, Changed: changed}, nil
}

// RequeueRequest says which documents go back to which module.
type RequeueRequest struct {
	Module string        `json:"module"`
	Path   protocol.Name `json:"path"` // prefix (exact bytes), relative to INDEX_DIRECTORY or absolute under it; "" = all
}

// Requeued says how many documents went back.
type Requeued struct {
	Module    string `json:"module"`
	Path      string `json:"path"`
	Documents int    `json:"documents"`
}

// Requeue sends the documents under a path prefix (all when empty) that reached a module back
// to it; their drives flip to pending. Works whether or not Redis is up: the dispatcher takes
// them from the catalog.
func (s *Service) Requeue(ctx context.Context, r RequeueRequest) (*Requeued, error) {
	if err := s.checkModule(r.Module); err != nil {
		return nil, err
	}
	rel, err := catalog.CleanRelPath(s.cfg.Daemon.IndexDirectory, string(r.Path))
	if err != nil {
		return nil, errorf(KindBadRequest, "%v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.cfg.Catalog.RequeueUnder(ctx, r.Module, s.cfg.Daemon.ModuleNames(), rel)
	if err != nil {
		return nil, err
	}
	s.cfg.Outbox.Wake()
	s.pipe.Wake()
	s.log.Info().Str("module", r.Module).Str("path", rel).Int("documents", n).Msg("documents requeued")
	return &Requeued{Module: r.Module, Path: rel, Documents: n}, nil
}

// Run enforces the FAILED_MAX bound every TrimEvery until ctx ends (only while this daemon
// runs the pipeline).
func (s *Service) Run(ctx context.Context) error {
	if s.pipe == nil {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(s.cfg.TrimEvery)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		err := s.Trim(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing && KindOf(err) != KindUnavailable:
			s.log.Warn().Err(err).Msg("FAILED_MAX bound not enforced; retrying")
			failing = true
		case err == nil:
			failing = false
		}
	}
}

// Trim drops each module's oldest parked jobs beyond FAILED_MAX (the Redis record and the
// catalog row; the document keeps its failures entry) and the oldest quarantined results beyond
// FAILED_MAX × the number of modules (they share one list), counting what it drops.
func (s *Service) Trim(ctx context.Context) error {
	q, err := s.activeQueue()
	if err != nil {
		return err
	}
	limit := s.cfg.Daemon.Pipeline.FailedMax
	if limit <= 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names := s.cfg.Daemon.ModuleNames()
	counts, err := s.cfg.Catalog.ModuleParked(ctx)
	if err != nil {
		return err
	}
	for _, m := range names {
		excess := counts[m] - int64(limit)
		if excess <= 0 {
			continue
		}
		old, err := s.cfg.Catalog.OldestParked(ctx, m, int(excess))
		if err != nil {
			return err
		}
		ids := make(map[string]string, len(old))
		for _, j := range old {
			ids[j.DocID] = j.Token
		}
		// Redis first: a crash between the two leaves catalog rows the next pass drops.
		if _, err := q.DropFailed(ctx, m, ids); err != nil {
			return err
		}
		n, err := s.cfg.Catalog.DropParked(ctx, m, ids, true)
		if err != nil {
			return err
		}
		s.log.Info().Str("module", m).Int64("dropped", n).Int("failed_max", limit).Msg("oldest parked jobs dropped beyond FAILED_MAX")
	}
	n, err := q.TrimQuarantine(ctx, limit*max(len(names), 1))
	if err != nil {
		return err
	}
	if n > 0 {
		s.log.Info().Int64("dropped", n).Msg("oldest quarantined results dropped beyond the bound")
	}
	return nil
}
