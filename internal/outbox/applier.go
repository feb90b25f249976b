// Package outbox applies committed catalog changes to the derived stores: the metadata
// directory (document.json, by-path links, drive markers) and the search index. Each outbox key
// is rendered from the catalog as it is when applied, so a replay after a crash writes the same
// bytes (and WriteDocument skips identical ones): effects are idempotent. The metadata part and
// the index part are tracked apart, so documents keep landing on disk while the index is down,
// and the index catches up when it returns.
package outbox

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/chunk"
	"github.com/homeindex/homeindex/internal/metadata"
	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/internal/supervise"
)

// MarkerUpdater re-evaluates one drive's status marker.
type MarkerUpdater interface {
	Update(ctx context.Context, drive string, present, changed bool) error
}

// Defaults for Config fields left zero.
const (
	DefaultBatch         = 1000
	DefaultFlushKeys     = 5000
	DefaultRetryInterval = 5 * time.Second
	DefaultGather        = 50 * time.Millisecond
)

// Config tunes the Applier; it is given to New and not changed afterwards. Zero fields take
// the defaults above (Chunk: chunk.DefaultOptions).
type Config struct {
	// Batch is how many keys one round handles (one index write per round).
	Batch int
	// FlushKeys is how many applied keys Drain gathers before one Flush of the metadata
	// directory and one OutboxDone that records them.
	FlushKeys int
	// RetryInterval is how long Run waits before retrying failed parts.
	RetryInterval time.Duration
	// Gather is how long Run lets wake-ups accumulate before a drain, so a stream of merges is
	// written in batches (one index write and one flush per batch), not one by one.
	Gather time.Duration
	// Chunk is CHUNK_TOKENS and CHUNK_OVERLAP.
	Chunk chunk.Options
	// LockFile, when set, is flock-ed for each drain, so drains of processes sharing the
	// state directory (a second daemon on standby runs its own outbox) take turns. Without it
	// one process could write a document rendered before a change after another process wrote
	// it rendered after, and both record their keys as applied: the file would stay stale.
	LockFile string
	// Configure, when set, applies index settings; it runs before the first index write and
	// again after a failure, so a search backend that was down at start is set up on return.
	Configure func(ctx context.Context) error
}

func (c Config) withDefaults() Config {
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.FlushKeys <= 0 {
		c.FlushKeys = DefaultFlushKeys
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = DefaultRetryInterval
	}
	if c.Gather <= 0 {
		c.Gather = DefaultGather
	}
	if c.Chunk == (chunk.Options{}) {
		c.Chunk = chunk.DefaultOptions
	}
	return c
}

// Applier drains the outbox.
type Applier struct {
	cfg        Config
	cat        *catalog.Catalog
	store      *metadata.Store
	index      search.Index
	markers    MarkerUpdater
	log        zerolog.Logger
	wake       chan struct{}
	configured bool

	drainMu sync.Mutex // one drain at a time
	lock    *os.File   // cfg.LockFile, opened by the first drain; guarded by drainMu
	mu      sync.Mutex
	last    Result
}

// New builds an Applier.
func New(cfg Config, cat *catalog.Catalog, store *metadata.Store, index search.Index, markers MarkerUpdater, log zerolog.Logger) *Applier {
	return &Applier{cfg: cfg.withDefaults(), cat: cat, store: store, index: index, markers: markers, log: log,
		wake: make(chan struct{}, 1)}
}

// Result says what one drain did and what is left.
type Result struct {
	Applied      int   // keys fully applied
	MetaFailed   int   // keys whose metadata part failed (retried later)
	IndexPending int   // keys whose index part is still pending
	IndexErr     error // why the index part stopped, if it did
}

// Wake asks Run to drain now.
func (a *Applier) Wake() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Last returns the result of the latest drain.
func (a *Applier) Last() Result {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

// Run drains on every Wake, and every RetryInterval while something failed, until ctx ends.
func (a *Applier) Run(ctx context.Context) error {
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-a.wake:
			if !supervise.Sleep(ctx, a.cfg.Gather) {
				return nil
			}
		case <-retry:
		}
		res, err := a.Drain(ctx)
		if err != nil && ctx.Err() == nil {
			a.log.Error().Err(err).Msg("outbox drain failed")
		}
		retry = nil
		if err != nil || res.MetaFailed > 0 || res.IndexPending > 0 {
			retry = time.After(a.cfg.RetryInterval)
		}
	}
}

// DrainWhile runs fn and, while it runs, drains on every Wake (with no Gather: the caller
// wakes once per batch of changes), so the derived stores fill while fn is still producing
// changes. It returns how many keys those drains applied, and fn's error, once the drain in
// progress, if any, has finished; drain errors are left to the caller's own Drain after it,
// which finds the keys still pending.
func (a *Applier) DrainWhile(ctx context.Context, fn func() error) (applied int, err error) {
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-a.wake:
			}
			res, err := a.Drain(ctx)
			applied += res.Applied
			if err != nil && ctx.Err() == nil {
				a.log.Warn().Err(err).Msg("outbox drain during the sync failed; the final drain retries")
			}
		}
	}()
	err = fn()
	close(stop)
	<-finished
	return applied, err
}

// Drain applies every pending key once. Keys whose metadata or index part fails stay pending.
//
// Rounds overlap: while one round's index write and by-path links run (a single SQLite
// writer, or a request to Meilisearch), the next round is read, rendered and its documents
// written, so the index writer, the slowest stage of a first sync, works without pauses.
// Index writes and links stay in round order, and a round's drive markers are evaluated only
// once its own index write and links are over.
func (a *Applier) Drain(ctx context.Context) (Result, error) {
	a.drainMu.Lock()
	defer a.drainMu.Unlock()
	var res Result
	unlock, err := a.lockProcesses()
	if err != nil {
		return res, fmt.Errorf("outbox: lock %s: %w", a.cfg.LockFile, err)
	}
	defer unlock()
	var after int64
	indexOK := true
	if err := a.configure(ctx); err != nil {
		indexOK = false
		res.IndexErr = err
		a.log.Warn().Err(err).Msg("search index not configured; will retry")
	}
	// Rounds are recorded as applied in groups of at least FlushKeys keys, after one Flush
	// that makes all their metadata durable: a crash before it only means they are applied
	// again (identical bytes are skipped). A group's flush and record run behind the rounds
	// (flushBehind), so a slow syncfs stalls no round; one group at a time.
	var unflushed []catalog.OutboxEntry
	var flush flushBehind
	var inflight *round
	indexed := make(chan struct{}, 1)
	// finish waits for the round in flight, if any, then settles its drive markers.
	finish := func() {
		if inflight == nil {
			return
		}
		<-indexed
		if err := inflight.indexErr; err != nil {
			indexOK = false
			res.IndexErr = err
		}
		a.applyDrives(ctx, inflight)
		unflushed = append(unflushed, inflight.entries...)
		inflight = nil
	}
	// stop ends the drain: the round in flight and the group being flushed finish first, as
	// both write res.
	stop := func(err error) (Result, error) {
		finish()
		if ferr := flush.wait(&res); err == nil {
			err = ferr
		}
		return res, err
	}
	for {
		entries, err := a.cat.PendingOutbox(ctx, after, a.cfg.Batch)
		if err != nil {
			return stop(err)
		}
		if len(entries) == 0 {
			finish()
			break
		}
		after = entries[len(entries)-1].Seq
		r, err := a.prepareRound(ctx, entries, indexOK)
		if err != nil {
			return stop(err)
		}
		finish()
		inflight = r
		// The goroutine touches r alone; finish reads what it left there. The round's by-path
		// links are made beside its index write: its documents are written, so no link points
		// at a document not yet there, and the next round's documents need not wait for them.
		write := indexOK
		go func() {
			var links sync.WaitGroup
			links.Go(func() { a.applyPaths(r) })
			if write {
				a.indexRound(ctx, r)
			}
			links.Wait()
			indexed <- struct{}{}
		}()
		if len(unflushed) >= a.cfg.FlushKeys {
			group := unflushed // the flush owns these now
			unflushed = nil
			if err := flush.start(func(n *Result) error { return a.done(ctx, group, n) }, &res); err != nil {
				return stop(err)
			}
		}
	}
	if err := flush.wait(&res); err != nil {
		return res, err
	}
	if len(unflushed) > 0 {
		if err := a.done(ctx, unflushed, &res); err != nil {
			return res, err
		}
	}
	a.mu.Lock()
	a.last = res
	a.mu.Unlock()
	return res, nil
}

// flushBehind runs one group's flush and record (Applier.done) in the background, while the
// drain applies the next rounds. On a disk, a syncfs of thousands of new files takes long
// enough that a drain waiting for each would leave the cores idle.
type flushBehind struct {
	running chan flushed // nil: nothing in flight
}

type flushed struct {
	res Result
	err error
}

// start waits for the group in flight, adding its counts to res, then starts done.
func (f *flushBehind) start(done func(*Result) error, res *Result) error {
	if err := f.wait(res); err != nil {
		return err
	}
	ch := make(chan flushed, 1)
	go func() {
		var out flushed
		out.err = done(&out.res)
		ch <- out
	}()
	f.running = ch
	return nil
}

// wait waits for the group in flight, if any, and adds its counts to res.
func (f *flushBehind) wait(res *Result) error {
	if f.running == nil {
		return nil
	}
	out := <-f.running
	f.running = nil
	res.Applied += out.res.Applied
	res.MetaFailed += out.res.MetaFailed
	res.IndexPending += out.res.IndexPending
	return out.err
}

// done flushes the metadata directory and records the entries' done flags, counting them.
func (a *Applier) done(ctx context.Context, entries []catalog.OutboxEntry, res *Result) error {
	if err := a.store.Flush(); err != nil {
		// Nothing of these rounds' metadata is known durable: apply it again later.
		a.log.Warn().Err(err).Msg("metadata directory not flushed; will retry")
		for i := range entries {
			entries[i].MetaDone = false
		}
	}
	if err := a.cat.OutboxDone(ctx, entries); err != nil {
		return err
	}
	for _, e := range entries {
		switch {
		case !e.MetaDone:
			res.MetaFailed++
		case !e.IndexDone:
			res.IndexPending++
		default:
			res.Applied++
		}
	}
	return nil
}

// round is one page of entries on its way through Drain; the stages update the entries'
// done flags in place.
type round struct {
	entries  []catalog.OutboxEntry
	w        indexWrite
	paths    []int             // path keys, in order, for applyPaths
	links    map[string]string // the documents of those paths (pathDocs)
	drives   []int             // drive keys, in order
	indexErr error             // why the index write failed, if it did
}

// prepareRound renders one page of entries and applies their metadata part. Documents are
// rendered with one query, and the index part is gathered into one write per kind of change
// (files upserted, files deleted, chunks replaced) for indexRound. The document files are
// written by metaWorkers goroutines (most of a document write is the kernel creating files).
// The by-path links are left to applyPaths, once the round's documents are written. With
// index, the index write's preparation (prepare) runs beside the document writes: it is CPU
// work the round's index write would otherwise do first, while the cores idle.
func (a *Applier) prepareRound(ctx context.Context, entries []catalog.OutboxEntry, index bool) (*round, error) {
	// A sync's new documents come from memory (catalog.TakeHandoff), the rest from the catalog.
	handed := a.cat.TakeHandoff(entries)
	docs, err := a.cat.Documents(ctx, roundDocIDs(entries, handed.Docs))
	if err != nil {
		return nil, err
	}
	for id, d := range handed.Docs {
		docs[id] = d
	}
	r := &round{entries: entries}
	var metas []docMeta
	var paths []int // path keys, in order
	for i := range entries {
		e := &entries[i]
		switch {
		case strings.HasPrefix(e.Key, catalog.KeyDoc):
			id := strings.TrimPrefix(e.Key, catalog.KeyDoc)
			d, ok := docs[id]
			if !ok {
				d.State = catalog.DocMissing
			}
			var raw []byte // the document's JSON, made once for both stores
			if d.State == catalog.DocLive && (!e.MetaDone || !e.IndexDone) {
				// MarshalJSON writes what json.Marshal would, without its second pass.
				if raw, err = d.Doc.MarshalJSON(); err != nil {
					return nil, fmt.Errorf("outbox: render %s: %w", id, err)
				}
			}
			if !e.MetaDone {
				metas = append(metas, docMeta{i: i, id: id, raw: raw, state: d.State})
			}
			if !e.IndexDone {
				r.w.document(i, id, d.State, raw)
			}
		case strings.HasPrefix(e.Key, catalog.KeyPath):
			paths = append(paths, i)
		case strings.HasPrefix(e.Key, catalog.KeyDrive):
			r.drives = append(r.drives, i)
		case strings.HasPrefix(e.Key, catalog.KeyChunks):
			if err := a.applyChunks(i, e, docs, &r.w); err != nil {
				return nil, err
			}
		default:
			a.log.Error().Str("key", e.Key).Msg("unknown outbox key dropped")
			e.MetaDone, e.IndexDone = true, true
		}
	}
	if r.links, err = a.pathDocs(ctx, entries, paths, handed.PathDocs); err != nil {
		return nil, err
	}
	r.paths = paths
	var prepared sync.WaitGroup
	if index && !indexWritesSkipped && !r.w.empty() {
		prepared.Go(func() { a.prepare(&r.w) })
	}
	a.applyDocMetas(entries, metas)
	prepared.Wait()
	return r, nil
}

// applyPaths makes or removes a prepared round's by-path links, in order.
func (a *Applier) applyPaths(r *round) {
	for _, i := range r.paths {
		r.entries[i].MetaDone = a.applyPath(r.links, strings.TrimPrefix(r.entries[i].Key, catalog.KeyPath))
		r.entries[i].IndexDone = true
	}
}

// indexRound writes a prepared round's index part; a failure is left in r.indexErr, and the
// keys stay pending for the retry.
func (a *Applier) indexRound(ctx context.Context, r *round) {
	if r.w.empty() {
		return
	}
	if err := a.writeIndex(ctx, &r.w); err != nil {
		r.indexErr = err
		a.log.Warn().Err(err).Int("keys", len(r.w.at)).Msg("search index not updated; will retry")
		return
	}
	for _, i := range r.w.at {
		r.entries[i].IndexDone = true
	}
}

// applyDrives re-evaluates the round's drive markers, last, so a drive turns ready only when
// its documents are on disk and searchable.
func (a *Applier) applyDrives(ctx context.Context, r *round) {
	for _, i := range r.drives {
		e := &r.entries[i]
		e.MetaDone = a.applyDrive(ctx, strings.TrimPrefix(e.Key, catalog.KeyDrive))
		e.IndexDone = true
	}
}

// pathDocs looks up the documents of the round's path keys that handed (TakeHandoff's) does
// not hold, with one query per few hundred, and returns them with handed's.
func (a *Applier) pathDocs(ctx context.Context, entries []catalog.OutboxEntry, paths []int, handed map[string]string) (map[string]string, error) {
	var rels []string
	for _, i := range paths {
		if rel := strings.TrimPrefix(entries[i].Key, catalog.KeyPath); !hasKey(handed, rel) {
			rels = append(rels, rel)
		}
	}
	if len(rels) == 0 {
		return handed, nil
	}
	docs, err := a.cat.FileDocs(ctx, rels)
	if err != nil {
		return nil, err
	}
	for p, id := range handed {
		docs[p] = id
	}
	return docs, nil
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// metaWorkers is how many document files a round writes at once (the kernel's work of
// creating files spreads over the cores, and a disk gets a queue to reorder).
const metaWorkers = 4

// docMeta is one document file a round writes or removes: entries[i] is its key.
type docMeta struct {
	i     int
	id    string
	raw   []byte // the document's JSON (compact), when live
	state catalog.DocState
}

// applyDocMetas writes the documents' files with metaWorkers goroutines, setting each entry's
// MetaDone.
func (a *Applier) applyDocMetas(entries []catalog.OutboxEntry, metas []docMeta) {
	next := make(chan docMeta)
	var wg sync.WaitGroup
	for range min(metaWorkers, len(metas)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range next {
				entries[m.i].MetaDone = a.applyDocMeta(m.id, m.raw, m.state)
			}
		}()
	}
	for _, m := range metas {
		next <- m
	}
	close(next)
	wg.Wait()
}

// roundDocIDs lists the documents a round's doc: and chunks: keys need rendered from the
// catalog: those not in handed.
func roundDocIDs(entries []catalog.OutboxEntry, handed map[string]catalog.Rendered) []string {
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutPrefix(e.Key, catalog.KeyDoc); ok {
			if !hasKey(handed, id) {
				ids = append(ids, id)
			}
		} else if id, _, ok := catalog.ParseChunksKey(e.Key); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

func (a *Applier) configure(ctx context.Context) error {
	if a.configured || a.cfg.Configure == nil {
		return nil
	}
	if err := a.cfg.Configure(ctx); err != nil {
		return err
	}
	a.configured = true
	return nil
}

// lockProcesses takes an exclusive flock on cfg.LockFile (opened once, kept open), waiting for
// another process to give it back; without a LockFile it locks nothing. The lock goes with the
// process if it dies. Called with drainMu held.
func (a *Applier) lockProcesses() (unlock func(), err error) {
	if a.cfg.LockFile == "" {
		return func() {}, nil
	}
	if a.lock == nil {
		if a.lock, err = os.OpenFile(a.cfg.LockFile, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
			return nil, err
		}
	}
	fd := int(a.lock.Fd())
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		return nil, err
	}
	return func() { _ = unix.Flock(fd, unix.LOCK_UN) }, nil
}
