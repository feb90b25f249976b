// Package outbox applies committed catalog changes to the derived stores: the metadata
// directory (document.json, by-path links, drive markers) and the search index. Each outbox key
// is rendered from the catalog as it is when applied, so a replay after a crash writes the same
// bytes (and WriteDocument skips identical ones): effects are idempotent. The metadata part and
// the index part are tracked apart, so documents keep landing on disk while the index is down,
// and the index catches up when it returns.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

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
	DefaultRetryInterval = 5 * time.Second
	DefaultGather        = 50 * time.Millisecond
)

// Config tunes the Applier; it is given to New and not changed afterwards. Zero fields take
// the defaults above (Chunk: chunk.DefaultOptions).
type Config struct {
	// Batch is how many keys one round handles (one index write per round).
	Batch int
	// RetryInterval is how long Run waits before retrying failed parts.
	RetryInterval time.Duration
	// Gather is how long Run lets wake-ups accumulate before a drain, so a stream of merges is
	// written in batches (one index write and one flush per batch), not one by one.
	Gather time.Duration
	// Chunk is CHUNK_TOKENS and CHUNK_OVERLAP.
	Chunk chunk.Options
	// Configure, when set, applies index settings; it runs before the first index write and
	// again after a failure, so a search backend that was down at start is set up on return.
	Configure func(ctx context.Context) error
}

func (c Config) withDefaults() Config {
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
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
func (a *Applier) Drain(ctx context.Context) (Result, error) {
	a.drainMu.Lock()
	defer a.drainMu.Unlock()
	var res Result
	var after int64
	indexOK := true
	if err := a.configure(ctx); err != nil {
		indexOK = false
		res.IndexErr = err
		a.log.Warn().Err(err).Msg("search index not configured; will retry")
	}
	// Rounds are recorded as applied in groups of at least flushKeys keys, after one Flush
	// that makes all their metadata durable: a crash before it only means they are applied
	// again (identical bytes are skipped).
	var unflushed []catalog.OutboxEntry
	for {
		entries, err := a.cat.PendingOutbox(ctx, after, a.cfg.Batch)
		if err != nil {
			return res, err
		}
		if len(entries) > 0 {
			after = entries[len(entries)-1].Seq
			if err := a.round(ctx, entries, &indexOK, &res); err != nil {
				return res, err
			}
			unflushed = append(unflushed, entries...)
		}
		if len(unflushed) > 0 && (len(entries) == 0 || len(unflushed) >= flushKeys) {
			if err := a.done(ctx, unflushed, &res); err != nil {
				return res, err
			}
			unflushed = unflushed[:0]
		}
		if len(entries) == 0 {
			break
		}
	}
	a.mu.Lock()
	a.last = res
	a.mu.Unlock()
	return res, nil
}

// flushKeys is how many applied keys Drain gathers before one Flush and one OutboxDone.
const flushKeys = 5000

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

// round applies one page of entries, updating their done flags in place. Documents are rendered
// with one query, and the index gets one write per kind of change (files upserted, files
// deleted, chunks replaced) for the whole round. The document files are written by metaWorkers
// goroutines while the index write runs: the two stores are independent, and most of a
// document write is the kernel creating the temp file. By-path links follow the document files
// (a link never points at a document not yet written), still beside the index write; drive
// markers come last, so a drive turns ready only when its documents are on disk and searchable.
func (a *Applier) round(ctx context.Context, entries []catalog.OutboxEntry, indexOK *bool, res *Result) error {
	docs, err := a.cat.Documents(ctx, roundDocIDs(entries))
	if err != nil {
		return err
	}
	var w indexWrite
	var metas []docMeta
	var paths, drives []int // path and drive keys, in order
	for i := range entries {
		e := &entries[i]
		switch {
		case strings.HasPrefix(e.Key, catalog.KeyDoc):
			id := strings.TrimPrefix(e.Key, catalog.KeyDoc)
			r, ok := docs[id]
			if !ok {
				r.State = catalog.DocMissing
			}
			var raw []byte // the document's JSON, made once for both stores
			if r.State == catalog.DocLive && (!e.MetaDone || !e.IndexDone) {
				if raw, err = json.Marshal(r.Doc); err != nil {
					return fmt.Errorf("outbox: render %s: %w", id, err)
				}
			}
			if !e.MetaDone {
				metas = append(metas, docMeta{i: i, id: id, raw: raw, state: r.State})
			}
			if !e.IndexDone {
				w.document(i, id, r.State, raw)
			}
		case strings.HasPrefix(e.Key, catalog.KeyPath):
			paths = append(paths, i)
		case strings.HasPrefix(e.Key, catalog.KeyDrive):
			drives = append(drives, i)
		case strings.HasPrefix(e.Key, catalog.KeyChunks):
			if err := a.applyChunks(i, e, docs, &w); err != nil {
				return err
			}
		default:
			a.log.Error().Str("key", e.Key).Msg("unknown outbox key dropped")
			e.MetaDone, e.IndexDone = true, true
		}
	}
	links, err := a.pathDocs(ctx, entries, paths)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		a.applyDocMetas(entries, metas)
		for _, i := range paths {
			entries[i].MetaDone = a.applyPath(links, strings.TrimPrefix(entries[i].Key, catalog.KeyPath))
			entries[i].IndexDone = true
		}
	})
	if *indexOK && !w.empty() {
		if err := a.writeIndex(ctx, &w); err != nil {
			*indexOK = false
			res.IndexErr = err
			a.log.Warn().Err(err).Int("keys", len(w.at)).Msg("search index not updated; will retry")
		} else {
			for _, i := range w.at {
				entries[i].IndexDone = true
			}
		}
	}
	wg.Wait()
	for _, i := range drives {
		e := &entries[i]
		e.MetaDone = a.applyDrive(ctx, strings.TrimPrefix(e.Key, catalog.KeyDrive))
		e.IndexDone = true
	}
	return nil
}

// pathDocs looks up the documents of the round's path keys with one query per few hundred.
func (a *Applier) pathDocs(ctx context.Context, entries []catalog.OutboxEntry, paths []int) (map[string]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	rels := make([]string, len(paths))
	for k, i := range paths {
		rels[k] = strings.TrimPrefix(entries[i].Key, catalog.KeyPath)
	}
	return a.cat.FileDocs(ctx, rels)
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

// roundDocIDs lists the documents a round's doc: and chunks: keys need rendered.
func roundDocIDs(entries []catalog.OutboxEntry) []string {
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutPrefix(e.Key, catalog.KeyDoc); ok {
			ids = append(ids, id)
		} else if rest, ok := strings.CutPrefix(e.Key, catalog.KeyChunks); ok {
			if id, _, ok := strings.Cut(rest, "/"); ok {
				ids = append(ids, id)
			}
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
