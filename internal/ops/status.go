package ops

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/drives"
	"github.com/homeindex/homeindex/internal/filesync"
	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/internal/watch"
)

// Status is the JSON of GET /api/status and `homeindexd status --json`; docs/api.md
// describes every field. Fields are only ever added.
type Status struct {
	Version     string           `json:"version"`
	GeneratedAt time.Time        `json:"generated_at"`
	StartedAt   time.Time        `json:"started_at"`
	Pipeline    PipelineStatus   `json:"pipeline"`
	Documents   DocumentCounts   `json:"documents"`
	Modules     []ModuleStatus   `json:"modules"`
	Drives      []DriveStatus    `json:"drives"`
	Sync        SyncStatus       `json:"sync"`
	Quarantine  QuarantineStatus `json:"quarantine"`
	Index       IndexStatus      `json:"index"`
	// Missing: missing documents, directories held as empty or unreadable, the mass-removal hold.
	Missing MissingStatus `json:"missing"`
	// Watch is how changes are detected (inotify watches, re-walk fallback); null when no
	// watcher runs.
	Watch *watch.Status `json:"watch"`
	// Errors lists the parts that could not be read (Redis down: queue counts are then 0).
	Errors []string `json:"errors"`
}

// Pipeline states.
const (
	PipelineOff         = "off"        // no MODULES
	PipelineStarting    = "starting"   // connecting to Redis or waiting for the daemon lock
	PipelineActive      = "active"     // dispatching, reaping, merging
	PipelineUnreachable = "redis_down" // was active, Redis does not answer now
)

// PipelineStatus says whether the module pipeline runs and, when it does not, why and since
// when (Reason "" and Since null while it is active).
type PipelineStatus struct {
	State  string     `json:"state"`
	Reason string     `json:"reason"`
	Since  *time.Time `json:"since"`
	Paused []string   `json:"paused"`
}

// DocumentCounts counts documents in the catalog.
type DocumentCounts struct {
	Live    int64 `json:"live"`
	Retired int64 `json:"retired"`
	Files   int64 `json:"files"`
}

// ModuleStatus is where one module stands. See docs/api.md for each count's meaning.
type ModuleStatus struct {
	Name           string `json:"name"`
	UID            string `json:"uid"`
	Position       int    `json:"position"`
	Paused         bool   `json:"paused"`
	Waiting        int64  `json:"waiting"`
	WaitingOffline int64  `json:"waiting_offline"`
	Queued         int64  `json:"queued"`
	Retrying       int64  `json:"retrying"`
	InFlight       int64  `json:"in_flight"`
	Merging        int64  `json:"merging"`
	// Recovering counts jobs the catalog dispatched whose Redis item is not there (yet): after
	// a crash until the dispatcher forgets and re-dispatches them, or while Redis cannot be
	// read. They are work not done, never "nothing waiting".
	Recovering     int64     `json:"recovering"`
	Done           int64     `json:"done"`
	Parked         int64     `json:"parked"`
	ParkedDropped  int64     `json:"parked_dropped"`
	LatestFailures []Failure `json:"latest_failures"`
	// OldestWaitingSeconds is the age of the oldest job waiting in Redis (since its first
	// dispatch); null when none waits.
	OldestWaitingSeconds *float64 `json:"oldest_waiting_seconds"`
	ThroughputPerMinute  int64    `json:"throughput_per_minute"`
	FinishedTotal        int64    `json:"finished_total"`
	// ETASeconds is null while the estimate is not stable; ETA is "unknown", "done" or a
	// duration such as "3m20s".
	ETASeconds *float64 `json:"eta_seconds"`
	ETA        string   `json:"eta"`
}

// Failure is one parked job.
type Failure struct {
	Module   string    `json:"module"`
	ID       string    `json:"id"`
	Path     string    `json:"path"`
	Reason   string    `json:"reason"`
	Attempts int       `json:"attempts"`
	At       time.Time `json:"at"`
}

// DriveStatus is where one archive drive stands.
type DriveStatus struct {
	Name    string `json:"name"`
	Present bool   `json:"present"`
	Marker  string `json:"marker"` // "pending", "ready" or "" (none on disk)
	Files   int64  `json:"files"`
	Pending int64  `json:"pending"`
	Done    int64  `json:"done"`
	Failed  int64  `json:"failed"`
	// State is "pending" (files wait for a module), "ready", or "ready_with_failures" (nothing
	// waits, but a module parked some of its files). The marker file on the drive keeps the
	// two states pending and ready.
	State string `json:"state"`
}

// Drive states.
const (
	DrivePending           = "pending"
	DriveReady             = "ready"
	DriveReadyWithFailures = "ready_with_failures"
)

// SyncStatus is the running sync's progress and the last finished sync.
type SyncStatus struct {
	Running  bool                 `json:"running"`
	Progress *SyncProgress        `json:"progress"`
	Last     *filesync.SyncRecord `json:"last"`
	Count    int64                `json:"count"`
	Failed   int64                `json:"failed"`
}

// SyncProgress is a running sync's counters with its rate and ETA.
type SyncProgress struct {
	Started     time.Time `json:"started"`
	Walked      int64     `json:"walked"`
	WalkDone    bool      `json:"walk_done"`
	Hashed      int64     `json:"hashed"`
	ToHash      int64     `json:"to_hash"`
	HashedBytes int64     `json:"hashed_bytes"`
	KnownFiles  int64     `json:"known_files"`
	MBPerSecond float64   `json:"mb_per_s"`
	ETASeconds  *float64  `json:"eta_seconds"`
	ETA         string    `json:"eta"`
}

// QuarantineStatus counts quarantined results.
type QuarantineStatus struct {
	Count   int64             `json:"count"`
	Dropped int64             `json:"dropped"`
	Latest  []QuarantineEntry `json:"latest"`
}

// QuarantineEntry is one quarantined result (without its payload).
type QuarantineEntry struct {
	Module string    `json:"module"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	Bytes  int       `json:"bytes"`
}

// IndexStatus is how far the metadata directory and the search index lag behind the catalog.
type IndexStatus struct {
	OutboxPending int64 `json:"outbox_pending"`
	IndexPending  int64 `json:"index_pending"`
}

// Counting documents and paths is the one O(collection) read of a status. Only a sync (or the
// legacy import before it) changes those totals, so they are counted again only when a sync
// ran since, every totalsRunningTTL while one runs, or after totalsMaxTTL: a scrape every few
// seconds on an idle catalog does not repeat the count. The first status and the first after
// a sync ended count while the caller waits (so they are exact); the others get the last
// totals at once while one background count refreshes them, so a page polled during a sync
// of a million files never waits for a count.
const (
	totalsMaxTTL     = 30 * time.Second
	totalsRunningTTL = 2 * time.Second
)

// totalsCache keeps the last document and path totals.
type totalsCache struct {
	mu       sync.Mutex
	at       time.Time // when val was counted; zero: never
	syncs    int64     // syncs finished when val was counted
	val      DocumentCounts
	counting bool // a background count is running
}

func (c *totalsCache) get(ctx context.Context, a Files, cat *catalog.Catalog, now time.Time, log zerolog.Logger) (DocumentCounts, error) {
	// Read the sync count before counting: a sync ending meanwhile makes the next call count again.
	_, syncs, _ := a.LastSync(ctx)
	running := a.SyncProgress().Running
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || (syncs != c.syncs && !running) {
		d, err := countTotals(ctx, cat)
		if err == nil {
			c.val, c.at, c.syncs = d, now, syncs
		}
		return d, err
	}
	age := now.Sub(c.at)
	if (age >= totalsMaxTTL || (running && age >= totalsRunningTTL)) && !c.counting {
		c.counting = true
		go c.refresh(context.WithoutCancel(ctx), cat, syncs, now, log)
	}
	return c.val, nil
}

// refresh counts in the background and stores the totals; on failure the old ones stay and
// the next status tries again.
func (c *totalsCache) refresh(ctx context.Context, cat *catalog.Catalog, syncs int64, now time.Time, log zerolog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	d, err := countTotals(ctx, cat)
	c.mu.Lock()
	c.counting = false
	if err != nil {
		log.Warn().Err(err).Msg("status: counting documents failed; the last totals stay")
	} else {
		c.val, c.at, c.syncs = d, now, syncs
	}
	c.mu.Unlock()
}

func countTotals(ctx context.Context, cat *catalog.Catalog) (d DocumentCounts, err error) {
	if d.Live, d.Retired, err = cat.CountDocuments(ctx); err != nil {
		return d, err
	}
	d.Files, err = cat.CountFiles(ctx)
	return d, err
}

// latestShown is how many latest failures and quarantine entries status shows.
const latestShown = 5

// Status reads where everything stands. Catalog problems are errors; Redis problems are
// reported in Errors and leave the queue counts at zero.
func (s *Service) Status(ctx context.Context) (*Status, error) {
	now := s.now()
	st := &Status{Version: s.cfg.Version, GeneratedAt: now.UTC(), StartedAt: s.started.UTC(),
		Modules: []ModuleStatus{}, Drives: []DriveStatus{}, Errors: []string{}}
	st.Pipeline = PipelineStatus{State: s.pipelineState(), Paused: []string{}}
	st.Pipeline.Reason, st.Pipeline.Since = s.pipelineReason(st.Pipeline.State)
	if s.pipe != nil {
		st.Pipeline.Paused = append(st.Pipeline.Paused, s.pipe.Pauses().List()...)
	}
	cat := s.cfg.Catalog
	var err error
	if st.Documents, err = s.totals.get(ctx, s.cfg.Files, s.cfg.Catalog, now, s.log); err != nil {
		return nil, err
	}
	if err := s.moduleStatus(ctx, st, now); err != nil {
		return nil, err
	}
	if err := s.driveStatus(ctx, st); err != nil {
		return nil, err
	}
	s.syncStatus(ctx, st, now)
	if err := s.missingStatus(ctx, st); err != nil {
		return nil, err
	}
	st.Watch = s.cfg.Files.WatchStatus()
	if st.Index.OutboxPending, st.Index.IndexPending, err = cat.OutboxLen(ctx); err != nil {
		return nil, err
	}
	if q := s.queue(); q != nil {
		if st.Quarantine.Count, st.Quarantine.Dropped, err = q.QuarantineCounts(ctx); err != nil {
			st.Errors = append(st.Errors, "redis: "+err.Error())
		} else if recs, err := q.QuarantinedNewest(ctx, latestShown); err == nil {
			for _, r := range recs {
				st.Quarantine.Latest = append(st.Quarantine.Latest, quarantineEntry(r))
			}
		}
	}
	if st.Quarantine.Latest == nil {
		st.Quarantine.Latest = []QuarantineEntry{}
	}
	return st, nil
}

func quarantineEntry(r queue.QuarantineRecord) QuarantineEntry {
	return QuarantineEntry{Module: queue.QuarantineModule(r), Reason: r.Reason, At: r.At.UTC(), Bytes: len(r.Payload)}
}

func (s *Service) pipelineState() string {
	if s.pipe == nil {
		return PipelineOff
	}
	select {
	case <-s.pipe.Ready():
	default:
		return PipelineStarting
	}
	if q := s.pipe.Queue(); q == nil || !q.Healthy() {
		return PipelineUnreachable
	}
	return PipelineActive
}

// pipelineReason says why the pipeline is in state, and since when ("" and nil when active or
// off).
func (s *Service) pipelineReason(state string) (string, *time.Time) {
	var reason string
	var since time.Time
	switch state {
	case PipelineStarting:
		c := s.pipe.Condition()
		reason, since = c.Reason, c.Since
	case PipelineUnreachable:
		reason = "redis unreachable"
		if q := s.pipe.Queue(); q != nil {
			if o, ok := q.Down(); ok {
				reason, since = "redis unreachable: "+o.Err, o.Since
			}
		}
	}
	if since.IsZero() {
		return reason, nil
	}
	t := since.UTC()
	return reason, &t
}

func (s *Service) moduleStatus(ctx context.Context, st *Status, now time.Time) error {
	names := s.cfg.Daemon.ModuleNames()
	if len(names) == 0 {
		return nil
	}
	counts, err := s.cfg.Catalog.ModuleCounts(ctx, names, st.Documents.Live)
	if err != nil {
		return err
	}
	q := s.queue()
	redisFailed := false
	for i, m := range s.cfg.Daemon.Modules {
		c := counts[m.Name]
		ms := ModuleStatus{Name: m.Name, UID: m.UID, Position: i, Waiting: c.Waiting, WaitingOffline: c.WaitingOffline,
			Done: c.Done, Parked: c.Parked, Paused: s.pipe.Pauses().Paused(m.Name), LatestFailures: []Failure{}}
		if ms.ParkedDropped, err = s.cfg.Catalog.MetaInt(ctx, catalog.MetaParkedDroppedPrefix+m.Name); err != nil {
			return err
		}
		parked, err := s.cfg.Catalog.ParkedJobs(ctx, m.Name, latestShown)
		if err != nil {
			return err
		}
		for _, p := range parked {
			ms.LatestFailures = append(ms.LatestFailures, failureOf(p))
		}
		// Dispatched jobs Redis cannot vouch for are recovering: all of them while the queues
		// cannot be read, else those beyond the jobs Redis has in flight.
		ms.Recovering = c.Dispatched
		if q != nil && !redisFailed {
			var jobs int64
			if jobs, err = queueCounts(ctx, q, &ms, now); err != nil {
				st.Errors = append(st.Errors, "redis: "+err.Error())
				redisFailed = true
			} else {
				ms.Recovering = max(c.Dispatched-jobs, 0)
			}
		}
		w := s.rates.Window(m.Name, now)
		ms.ThroughputPerMinute, ms.FinishedTotal = w.LastMinute, w.Total
		backlog := ms.Waiting + ms.Recovering + ms.Queued + ms.InFlight + ms.Merging
		if eta, ok := ETA(backlog, w, ms.Paused); ok {
			secs := eta.Seconds()
			ms.ETASeconds = &secs
			ms.ETA = eta.Round(time.Second).String()
			if backlog == 0 {
				ms.ETA = "done"
			}
		} else {
			ms.ETA = "unknown"
		}
		st.Modules = append(st.Modules, ms)
	}
	return nil
}

// queueCounts fills the Redis side of a module's status and returns how many jobs Redis has in
// flight for it.
func queueCounts(ctx context.Context, q *queue.Client, ms *ModuleStatus, now time.Time) (int64, error) {
	n, err := q.Counts(ctx, ms.Name)
	if err != nil {
		return 0, err
	}
	ms.Queued, ms.Retrying = n.Check+n.Run+n.Retry, n.Retry
	ms.InFlight = n.CheckProcessing + n.RunProcessing
	ms.Merging = max(n.Jobs-ms.Queued-ms.InFlight, 0)
	since, ok, err := q.OldestWaiting(ctx, ms.Name)
	if err != nil {
		return 0, err
	}
	if ok {
		age := max(now.Sub(since).Seconds(), 0)
		ms.OldestWaitingSeconds = &age
	}
	return n.Jobs, nil
}

func failureOf(p catalog.ParkedJob) Failure {
	return Failure{Module: p.Module, ID: p.DocID, Path: p.Path, Reason: p.Reason, Attempts: p.Attempt, At: p.Updated.UTC()}
}

func (s *Service) driveStatus(ctx context.Context, st *Status) error {
	counts, err := s.cfg.Catalog.DriveCounts(ctx)
	if err != nil {
		return err
	}
	archive := drives.New(s.cfg.Daemon.ArchiveDirectory)
	for _, c := range counts {
		d := DriveStatus{Name: c.Name, Present: c.Present, Files: c.Files, Pending: c.Pending, Done: c.Done, Failed: c.Failed,
			State: DriveReady}
		switch {
		case c.Pending > 0:
			d.State = DrivePending
		case c.Failed > 0:
			d.State = DriveReadyWithFailures
		}
		if state, _, ok, err := archive.Marker(c.Name); err == nil && ok {
			d.Marker = string(state)
		}
		st.Drives = append(st.Drives, d)
	}
	return nil
}

func (s *Service) syncStatus(ctx context.Context, st *Status, now time.Time) {
	st.Sync.Last, st.Sync.Count, st.Sync.Failed = s.cfg.Files.LastSync(ctx)
	p := s.cfg.Files.SyncProgress()
	if !p.Running {
		return
	}
	st.Sync.Running = true
	sp := &SyncProgress{Started: p.Started.UTC(), Walked: p.Walked, WalkDone: p.WalkDone, Hashed: p.Hashed,
		ToHash: p.ToHash, HashedBytes: p.HashedBytes, KnownFiles: p.KnownFiles, MBPerSecond: p.MBps(now), ETA: "unknown"}
	if eta, ok := p.ETA(now); ok {
		secs := eta.Seconds()
		sp.ETASeconds, sp.ETA = &secs, eta.Round(time.Second).String()
	}
	st.Sync.Progress = sp
}
