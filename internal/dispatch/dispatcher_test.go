package dispatch

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
)

// fixture is a dispatcher over real parts: a redis-server and a catalog in a temp directory.
type fixture struct {
	t   *testing.T
	ctx context.Context
	rdb *redis.Client // assertions
	q   *queue.Client
	cat *catalog.Catalog
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	srv := redistest.Start(t)
	f := &fixture{t: t, ctx: ctx, rdb: srv.Client()}
	var err error
	if f.q, err = queue.Connect(ctx, queue.Options{Endpoint: redisconn.Endpoint{Addr: srv.Addr()}, DialTimeout: time.Second}, zerolog.Nop()); err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = f.q.Close() })
	if f.cat, err = catalog.Open(filepath.Join(t.TempDir(), "catalog.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.cat.Close() })
	return f
}

// addDoc creates a live document with one path (on drive when drive is not "") waiting on
// module next.
func (f *fixture) addDoc(id, path, drive string, present bool, next string) {
	f.t.Helper()
	err := f.cat.Update(f.ctx, func(tx *catalog.Tx) error {
		if drive != "" {
			if err := tx.SetDrivePresent(f.ctx, drive, present); err != nil {
				return err
			}
		}
		if _, err := tx.InsertDocument(f.ctx, catalog.DocRow{ID: id, Type: "text/plain", Size: 5, Next: next, Version: 1}); err != nil {
			return err
		}
		if err := tx.PutFile(f.ctx, catalog.File{Path: path, DocID: id, Dev: 1, Ino: uint64(len(path)), Size: 5,
			MtimeNs: 1_700_000_000_500_000_000, Mtime: 1700000000.5, Drive: drive}); err != nil {
			return err
		}
		return tx.Dirty(f.ctx, catalog.DocKey(id), catalog.PathKey(path)) // sets the dispatch tier
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// setDrive records drive's presence and dirties its documents ids, as a sync does.
func (f *fixture) setDrive(drive string, present bool, ids ...string) {
	f.t.Helper()
	err := f.cat.Update(f.ctx, func(tx *catalog.Tx) error {
		if err := tx.SetDrivePresent(f.ctx, drive, present); err != nil {
			return err
		}
		for _, id := range ids {
			if err := tx.Dirty(f.ctx, catalog.DocKey(id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// checkItems returns the items waiting in module's :check list, head first.
func (f *fixture) checkItems(module string) []string {
	f.t.Helper()
	items, err := f.rdb.LRange(f.ctx, protocol.CheckKey(module), 0, -1).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	return items
}

func (f *fixture) dispatcher(window int, pauses *Pauses) *Dispatcher {
	return New(Config{Modules: []Module{{Name: "m1", UID: "1", Window: window}}, Pauses: pauses}, f.cat, f.q, zerolog.Nop())
}

// A full pass fills the window, documents with a path on a present drive (tier A) first, and
// records a queued job for each item it pushes.
func TestRefillFillsTheWindowTierAFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.addDoc("b1", "a-regular.txt", "", false, "m1")
	f.addDoc("b2", "b-regular.txt", "", false, "m1")
	f.addDoc("a1", "archive/usb/x.txt", "usb", true, "m1")
	f.addDoc("a2", "archive/usb/y.txt", "usb", true, "m1")
	d := f.dispatcher(2, nil)
	if err := d.RefillAll(f.ctx); err != nil {
		t.Fatal(err)
	}
	items := f.checkItems("m1")
	if len(items) != 2 {
		t.Fatalf("%d items in the window, want 2: %v", len(items), items)
	}
	for _, it := range items {
		if !strings.Contains(it, "archive/usb/") {
			t.Fatalf("a tier-B document went before tier A: %s", it)
		}
	}
	if n, _ := d.Counts(); n != 2 {
		t.Fatalf("dispatched %d, want 2", n)
	}
	// A second pass with the window full pushes nothing.
	if err := d.RefillAll(f.ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := d.Counts(); n != 2 || len(f.checkItems("m1")) != 2 {
		t.Fatalf("full window refilled: dispatched %d, items %d", n, len(f.checkItems("m1")))
	}
}

// A drive that goes away has its not-started jobs withdrawn from Redis (and forgotten in the
// catalog); the room goes to documents that can run.
func TestAbsentDrivesJobsAreWithdrawn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.addDoc("a1", "archive/usb/x.txt", "usb", true, "m1")
	f.addDoc("b1", "regular.txt", "", false, "m1")
	d := f.dispatcher(1, nil)
	if err := d.RefillAll(f.ctx); err != nil {
		t.Fatal(err)
	}
	if items := f.checkItems("m1"); len(items) != 1 || !strings.Contains(items[0], "archive/usb/") {
		t.Fatalf("items %v, want the drive's document", items)
	}
	f.setDrive("usb", false, "a1")
	if err := d.RefillAll(f.ctx); err != nil {
		t.Fatal(err)
	}
	items := f.checkItems("m1")
	if len(items) != 1 || !strings.Contains(items[0], "regular.txt") {
		t.Fatalf("items %v after the drive went away, want the regular document", items)
	}
	if _, w := d.Counts(); w != 1 {
		t.Fatalf("withdrawn %d, want 1", w)
	}
}

// A paused module gets no new jobs; the pause is persisted in the catalog, and resuming lets
// the next pass fill the window.
func TestPausedModuleGetsNoNewJobs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.addDoc("b1", "regular.txt", "", false, "m1")
	pauses := NewPauses(f.cat)
	if changed, err := pauses.Set(f.ctx, "m1", true); err != nil || !changed {
		t.Fatalf("pause: changed %v, %v", changed, err)
	}
	reloaded := NewPauses(f.cat)
	if err := reloaded.Load(f.ctx); err != nil {
		t.Fatal(err)
	}
	if got := reloaded.List(); !slices.Equal(got, []string{"m1"}) {
		t.Fatalf("persisted pauses %v, want [m1]", got)
	}
	d := f.dispatcher(4, reloaded)
	if err := d.RefillAll(f.ctx); err != nil {
		t.Fatal(err)
	}
	if items := f.checkItems("m1"); len(items) != 0 {
		t.Fatalf("a paused module got %d jobs", len(items))
	}
	if _, err := reloaded.Set(f.ctx, "m1", false); err != nil {
		t.Fatal(err)
	}
	if err := d.RefillAll(f.ctx); err != nil {
		t.Fatal(err)
	}
	if items := f.checkItems("m1"); len(items) != 1 {
		t.Fatalf("resumed module has %d jobs, want 1", len(items))
	}
}

// When a drive appears, the not-started tier-B jobs are taken back so that the drive's
// documents go before them.
func TestAppearedDrivePreemptsJobsNotStarted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.addDoc("b1", "a-regular.txt", "", false, "m1")
	f.addDoc("b2", "b-regular.txt", "", false, "m1")
	d := f.dispatcher(2, nil)
	if err := d.RefillAll(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.addDoc("a1", "archive/usb/x.txt", "usb", true, "m1")
	if err := d.RefillAll(f.ctx); err != nil {
		t.Fatal(err)
	}
	if items := f.checkItems("m1"); len(items) != 2 || strings.Contains(strings.Join(items, ""), "archive/usb/") {
		t.Fatalf("items %v: a full window took the drive's document without a preemption", items)
	}
	d.DriveAppeared()
	if err := d.RefillAll(f.ctx); err != nil {
		t.Fatal(err)
	}
	items := f.checkItems("m1")
	if len(items) == 0 || !strings.Contains(items[0], "archive/usb/") {
		t.Fatalf("items %v after the drive appeared, want its document at the head", items)
	}
	if _, w := d.Counts(); w == 0 {
		t.Fatal("no tier-B job withdrawn")
	}
}

// A drive that appears when its documents are dispatched already (the refill after the sync
// that recorded them ran before the drive's announcement) takes nothing back: the tier-B job
// waiting behind them would only be checked a second time.
func TestAppearedDriveWithNothingWaitingWithdrawsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.addDoc("b1", "a-regular.txt", "", false, "m1")
	f.addDoc("a1", "archive/usb/x.txt", "usb", true, "m1")
	d := f.dispatcher(4, nil)
	if err := d.RefillAll(f.ctx); err != nil {
		t.Fatal(err)
	}
	before := f.checkItems("m1")
	if len(before) != 2 {
		t.Fatalf("items %v, want both documents dispatched", before)
	}
	d.DriveAppeared()
	if err := d.RefillAll(f.ctx); err != nil {
		t.Fatal(err)
	}
	if _, w := d.Counts(); w != 0 {
		t.Fatalf("%d jobs withdrawn with no tier-A document waiting", w)
	}
	if after := f.checkItems("m1"); !slices.Equal(after, before) {
		t.Fatalf("items %v after the drive appeared, want them as they were: %v", after, before)
	}
}
