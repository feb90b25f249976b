package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/drives"
	"github.com/homeindex/homeindex/internal/metadata"
	"github.com/homeindex/homeindex/internal/outbox"
	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/protocol"
)

// bundle is an Applier over a real catalog, metadata directory and embedded index, all in a
// temp dir. The index can be switched down (switchIndex); drive marker updates are recorded.
type bundle struct {
	t       *testing.T
	ctx     context.Context
	cat     *catalog.Catalog
	store   *metadata.Store
	index   *switchIndex
	markers *markerRecorder
	a       *outbox.Applier
	metaDir string
	// cfg is the Applier's Config (setupWith); open adds Configure.
	cfg outbox.Config
	// configured counts successful Configure calls.
	configured atomic.Int64
}

func setup(t *testing.T) *bundle {
	t.Helper()
	return setupWith(t, outbox.Config{})
}

// setupWith is setup with an Applier built from cfg.
func setupWith(t *testing.T, cfg outbox.Config) *bundle {
	t.Helper()
	dir := t.TempDir()
	b := &bundle{t: t, ctx: context.Background(), markers: &markerRecorder{}, cfg: cfg}
	var err error
	if b.cat, err = catalog.Open(filepath.Join(dir, "catalog.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.cat.Close() })
	ix, err := search.OpenEmbedded(filepath.Join(dir, "search.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	b.index = &switchIndex{Index: search.WithFileDocuments(ix, "archive")}
	b.metaDir = filepath.Join(dir, "metadata")
	b.open()
	return b
}

// open (re)opens the metadata directory and builds a new Applier over it, as a daemon start
// does.
func (b *bundle) open() {
	b.t.Helper()
	var err error
	if b.store, err = metadata.Open(b.metaDir); err != nil {
		b.t.Fatal(err)
	}
	cfg := b.cfg
	cfg.Configure = func(ctx context.Context) error {
		if err := b.index.Files().Configure(ctx, search.FileSettings(search.Settings{Filterable: []string{"id", "next", "offline"}})); err != nil {
			return err
		}
		if err := b.index.Chunks().Configure(ctx, search.ChunkSettings); err != nil {
			return err
		}
		b.configured.Add(1)
		return nil
	}
	b.a = outbox.New(cfg, b.cat, b.store, b.index, b.markers, zerolog.New(zerolog.NewTestWriter(b.t)))
}

// update runs fn in one catalog transaction.
func (b *bundle) update(fn func(t *catalog.Tx) error) {
	b.t.Helper()
	if err := b.cat.Update(b.ctx, fn); err != nil {
		b.t.Fatal(err)
	}
}

// addDoc records a live document with paths (a path under archive/<d>/ is on present drive d)
// and dirties its doc: and path: keys, as a sync does.
func (b *bundle) addDoc(id string, paths ...string) {
	b.t.Helper()
	b.update(func(t *catalog.Tx) error {
		if _, err := t.InsertDocument(b.ctx, catalog.DocRow{ID: id, Type: "text/plain", Size: 5, Version: protocol.CurrentVersion}); err != nil {
			return err
		}
		for _, p := range paths {
			d, _ := drives.DriveOf("archive", p)
			if d != "" {
				if err := t.SetDrivePresent(b.ctx, d, true); err != nil {
					return err
				}
			}
			if err := t.PutFile(b.ctx, catalog.File{Path: p, DocID: id, Dev: 1, Ino: 1, Size: 5, MtimeNs: 1e18, Mtime: 1e9, Drive: d}); err != nil {
				return err
			}
			if err := t.Dirty(b.ctx, catalog.PathKey(p)); err != nil {
				return err
			}
		}
		return t.Dirty(b.ctx, catalog.DocKey(id))
	})
}

// removePaths deletes paths; a document left with none goes missing, as a sync does.
func (b *bundle) removePaths(id string, paths ...string) {
	b.t.Helper()
	b.update(func(t *catalog.Tx) error {
		for _, p := range paths {
			if err := t.DeleteFile(b.ctx, p); err != nil {
				return err
			}
			if err := t.Dirty(b.ctx, catalog.PathKey(p)); err != nil {
				return err
			}
		}
		if n, err := t.DocPathCount(b.ctx, id); err != nil || n > 0 {
			return err
		}
		if err := t.SetMissing(b.ctx, id, time.Now()); err != nil {
			return err
		}
		return t.Dirty(b.ctx, catalog.DocKey(id))
	})
}

// drain runs one Drain that must apply everything.
func (b *bundle) drain() outbox.Result {
	b.t.Helper()
	res, err := b.a.Drain(b.ctx)
	if err != nil || res.MetaFailed > 0 || res.IndexPending > 0 || res.IndexErr != nil {
		b.t.Fatalf("drain: %+v, %v", res, err)
	}
	if n, _ := b.outboxLen(); n != 0 {
		b.t.Fatalf("%d outbox keys left after a clean drain", n)
	}
	return res
}

func (b *bundle) outboxLen() (total, index int64) {
	b.t.Helper()
	total, index, err := b.cat.OutboxLen(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	return total, index
}

// documentJSON returns by-id/<id>/document.json ("" when absent).
func (b *bundle) documentJSON(id string) string {
	b.t.Helper()
	data, err := b.store.ReadDocument(id)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		b.t.Fatal(err)
	}
	return string(data)
}

// rendered is what document.json must hold for id: the catalog's rendering.
func (b *bundle) rendered(id string) string {
	b.t.Helper()
	d, _, err := b.cat.Document(b.ctx, id)
	if err != nil {
		b.t.Fatal(err)
	}
	data, err := outbox.RenderDocument(d)
	if err != nil {
		b.t.Fatal(err)
	}
	return string(data)
}

func (b *bundle) hasDir(id string) bool {
	_, err := os.Stat(b.store.DocumentDir(id))
	return err == nil
}

// link returns the document a by-path link points at ("" when there is none).
func (b *bundle) link(rel string) string {
	b.t.Helper()
	id, ok, err := b.store.LinkTarget(rel)
	if err != nil {
		b.t.Fatal(err)
	}
	if !ok {
		return ""
	}
	return id
}

// indexed returns the ids in the files index, sorted.
func (b *bundle) indexed() []string {
	b.t.Helper()
	var ids []string
	if err := b.index.Files().IDs(b.ctx, func(id string) error { ids = append(ids, id); return nil }); err != nil {
		b.t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// chunkHits returns the file_id of every chunk matching q, sorted.
func (b *bundle) chunkHits(q string) []string {
	b.t.Helper()
	res, err := b.index.Chunks().Search(b.ctx, search.Query{Q: q, Limit: 100})
	if err != nil {
		b.t.Fatal(err)
	}
	var out []string
	for _, h := range res.Hits {
		var c struct {
			FileID string `json:"file_id"`
		}
		if err := json.Unmarshal(h, &c); err != nil {
			b.t.Fatal(err)
		}
		out = append(out, c.FileID)
	}
	slices.Sort(out)
	return out
}

func (b *bundle) chunkCount() int64 {
	b.t.Helper()
	n, err := b.index.Chunks().Count(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	return n
}

var errDown = errors.New("index down")

// switchIndex is the real index with a down switch: while down, every write and Configure
// fails (reads still work, for assertions). It counts the upserts prepared (PrepareUpsert)
// and those sent whole (Upsert).
type switchIndex struct {
	search.Index
	down              atomic.Bool
	prepared, upserts atomic.Int64
	// beforeWrite, when set, runs before each prepared upsert's write.
	beforeWrite func()
}

func (s *switchIndex) Files() search.Collection  { return switchCollection{s.Index.Files(), s} }
func (s *switchIndex) Chunks() search.Collection { return switchCollection{s.Index.Chunks(), s} }

type switchCollection struct {
	search.Collection
	s *switchIndex
}

// PrepareUpsert prepares as the real collection does (the CPU work, which needs no backend);
// the write fails while down.
func (c switchCollection) PrepareUpsert(docs []json.RawMessage) (search.PreparedUpsert, error) {
	c.s.prepared.Add(1)
	u, err := search.PrepareUpsert(c.Collection, docs)
	if err != nil {
		return nil, err
	}
	return switchUpsert{u, c.s}, nil
}

type switchUpsert struct {
	search.PreparedUpsert
	s *switchIndex
}

func (u switchUpsert) Write(ctx context.Context) error {
	if u.s.beforeWrite != nil {
		u.s.beforeWrite()
	}
	if u.s.down.Load() {
		return errDown
	}
	return u.PreparedUpsert.Write(ctx)
}

var _ search.Collection = switchCollection{}

func (c switchCollection) Configure(ctx context.Context, s search.Settings) error {
	if c.s.down.Load() {
		return errDown
	}
	return c.Collection.Configure(ctx, s)
}

func (c switchCollection) Upsert(ctx context.Context, docs []json.RawMessage) error {
	c.s.upserts.Add(1)
	if c.s.down.Load() {
		return errDown
	}
	return c.Collection.Upsert(ctx, docs)
}

func (c switchCollection) Delete(ctx context.Context, ids []string) error {
	if c.s.down.Load() {
		return errDown
	}
	return c.Collection.Delete(ctx, ids)
}

func (c switchCollection) DeleteByFilter(ctx context.Context, filter string) error {
	if c.s.down.Load() {
		return errDown
	}
	return c.Collection.DeleteByFilter(ctx, filter)
}

// markerRecorder is an outbox.MarkerUpdater that records its calls and can be made to fail.
type markerRecorder struct {
	mu    sync.Mutex
	calls []markerCall
	fail  error
}

type markerCall struct {
	Drive            string
	Present, Changed bool
}

var _ outbox.MarkerUpdater = (*markerRecorder)(nil)

func (m *markerRecorder) Update(_ context.Context, drive string, present, changed bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, markerCall{drive, present, changed})
	return m.fail
}

func (m *markerRecorder) take() []markerCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.calls
	m.calls = nil
	return out
}

func (m *markerRecorder) setFail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = err
}
