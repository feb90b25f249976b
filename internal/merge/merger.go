package merge

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/metadata"
	"github.com/homeindex/homeindex/internal/queue"
)

// Config defaults.
const (
	DefaultMaxPayload = 16 << 20
	DefaultMaxDepth   = 64
	DefaultMaxValues  = 1 << 20
	DefaultBlock      = time.Second
	DefaultBatch      = 64
	DefaultGather     = 20 * time.Millisecond
)

// Config configures a Merger. Zero fields take the defaults above.
type Config struct {
	// Pipeline is the configured module names in order: results of other modules are dropped,
	// and `next` advances along it.
	Pipeline []string
	// Policy retries module-reported errors (queue.Fail).
	Policy queue.RetryPolicy
	// MaxPayload is the largest payload accepted, in bytes; a larger one is quarantined.
	MaxPayload int
	// MaxDepth is the deepest JSON nesting accepted (the payload object is 1).
	MaxDepth int
	// MaxValues is the most JSON values (scalars and containers) one payload may hold.
	MaxValues int
	// Block is how long one NextDone waits for a result.
	Block time.Duration
	// Batch is the most results taken and merged in one catalog transaction.
	Batch int
	// Gather is how long Run waits after a take that came back short of Batch before the
	// next take, so results arriving as a stream are merged many per catalog transaction
	// (the commit is most of a small batch's cost) rather than a few at a time as they come.
	// It adds at most Gather to a result's wait; a full take is followed by the next at once.
	Gather time.Duration
	// OnMerged, when set, is called after each applied merge, and after each park the merger
	// records (the document changed either way): the daemon wakes the outbox and the
	// dispatcher. It must not block.
	OnMerged func(docID, module string)
}

func (c Config) withDefaults() Config {
	if c.MaxPayload <= 0 {
		c.MaxPayload = DefaultMaxPayload
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = DefaultMaxDepth
	}
	if c.MaxValues <= 0 {
		c.MaxValues = DefaultMaxValues
	}
	if c.Block <= 0 {
		c.Block = DefaultBlock
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.Gather <= 0 {
		c.Gather = DefaultGather
	}
	c.Pipeline = slices.Clone(c.Pipeline)
	return c
}

// Backoff bounds of Run after a failure (Redis or catalog unreachable). The cap keeps the
// merger resuming within ~2 s of Redis coming back (fault test R3) at a cost of one retry
// every 2 s during an outage.
const (
	backoffMin = 100 * time.Millisecond
	backoffMax = 2 * time.Second
)

// Merger consumes modules:done. Run it in one goroutine.
type Merger struct {
	cfg   Config
	q     *queue.Client
	cat   *catalog.Catalog
	store *metadata.Store
	log   zerolog.Logger

	stats counters

	backoffMin, backoffMax time.Duration
	retries                atomic.Int64 // failed Run iterations, for tests
	// afterCommit, when set (tests only), runs after a catalog commit and before AckDone; an
	// error ends Handle there, as a crash would.
	afterCommit func(ref queue.JobRef) error
}

// New builds a Merger.
func New(cfg Config, q *queue.Client, cat *catalog.Catalog, store *metadata.Store, log zerolog.Logger) *Merger {
	return &Merger{cfg: cfg.withDefaults(), q: q, cat: cat, store: store, log: log,
		backoffMin: backoffMin, backoffMax: backoffMax}
}

func (m *Merger) notify(docID, module string) {
	fn := m.cfg.OnMerged
	if fn != nil {
		fn(docID, module)
	}
}

// Stats counts what the merger did with the results it handled.
type Stats struct {
	Merged         int64 // merged into the catalog
	Replayed       int64 // merged before (a replay after a crash): nothing changed
	Stale          int64 // job not current (file changed, requeued, merged, unknown file, not ours): dropped
	UnknownModule  int64 // module not configured or not a valid name: dropped
	Quarantined    int64 // malformed: moved to modules:quarantine with the reason
	Failed         int64 // module-reported errors, retried or parked (queue.Fail)
	Permanent      int64 // module-reported permanent errors: parked at once
	RejectedFields int64 // fields dropped as ambiguous (a core field's name in another case, "")
}

type counters struct {
	merged, replayed, stale, unknownModule, quarantined, failed, permanent, rejectedFields atomic.Int64
}

// Stats returns the counters so far.
func (m *Merger) Stats() Stats {
	s := &m.stats
	return Stats{Merged: s.merged.Load(), Replayed: s.replayed.Load(), Stale: s.stale.Load(),
		UnknownModule: s.unknownModule.Load(), Quarantined: s.quarantined.Load(), Failed: s.failed.Load(),
		Permanent: s.permanent.Load(), RejectedFields: s.rejectedFields.Load()}
}

func (m *Merger) configured(module string) bool {
	return metadata.ValidModuleName(module) && slices.Contains(m.cfg.Pipeline, module)
}
