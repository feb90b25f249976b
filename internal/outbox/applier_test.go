package outbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/outbox"
	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/internal/testutil/wait"
	"golang.org/x/sys/unix"
)

const (
	idA = "00000000000000a1"
	idB = "00000000000000b2"
	idC = "00000000000000c3"
)

// A drain writes each live document's document.json (the catalog's rendering, indented by 4
// spaces), a relative by-path link per path and one index entry, then empties the outbox.
func TestDrainWritesDocumentLinksAndIndex(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDoc(idA, "docs/a.txt", "copy/a.txt")
	b.addDoc(idB, "archive/d1/b.txt")
	res := b.drain()
	if res.Applied != 5 {
		t.Fatalf("applied %d keys, want 5 (2 documents, 3 paths)", res.Applied)
	}
	for _, id := range []string{idA, idB} {
		if got, want := b.documentJSON(id), b.rendered(id); got != want {
			t.Fatalf("document.json of %s:\n got %s\nwant %s", id, got, want)
		}
	}
	if !strings.HasPrefix(b.documentJSON(idA), "{\n    \"id\": \""+idA+"\",\n") {
		t.Fatalf("document.json not indented by 4 spaces:\n%s", b.documentJSON(idA))
	}
	for rel, id := range map[string]string{"docs/a.txt": idA, "copy/a.txt": idA, "archive/d1/b.txt": idB} {
		if got := b.link(rel); got != id {
			t.Errorf("by-path/%s -> %q, want %s", rel, got, id)
		}
		target, err := os.Readlink(filepath.Join(b.store.Root(), "by-path", filepath.FromSlash(rel)))
		if err != nil || filepath.IsAbs(target) {
			t.Errorf("by-path/%s: link %q, %v; want a relative link", rel, target, err)
		}
	}
	if got := b.indexed(); !slices.Equal(got, []string{idA, idB}) {
		t.Fatalf("indexed %v", got)
	}
	if b.configured.Load() != 1 {
		t.Fatalf("Configure ran %d times, want once before the first index write", b.configured.Load())
	}
	if last := b.a.Last(); last.Applied != 5 {
		t.Fatalf("Last() = %+v", last)
	}
}

// Replaying applied keys (a crash after the writes, before the outbox rows were cleared)
// changes nothing: document.json is not rewritten (same inode and mtime), links stay, the index
// holds each document once.
func TestReplayAfterCrashIsANoOp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDoc(idA, "a.txt")
	b.drain()
	p := filepath.Join(b.store.DocumentDir(idA), "document.json")
	before, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// The crash: the keys are pending again although their effects are on disk.
	if err := b.cat.DirtyKeys(b.ctx, []string{catalog.DocKey(idA), catalog.PathKey("a.txt")}); err != nil {
		t.Fatal(err)
	}
	b.drain()
	after, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("a replay rewrote document.json")
	}
	if got := b.documentJSON(idA); got != b.rendered(idA) {
		t.Fatalf("document.json after replay:\n%s", got)
	}
	if b.link("a.txt") != idA {
		t.Fatal("link lost by a replay")
	}
	if n, _ := b.index.Files().Count(b.ctx); n != 1 {
		t.Fatalf("index holds %d documents after a replay, want 1", n)
	}
}

// Each key is rendered from the catalog as it is when applied: two changes before a drain
// write the last state once.
func TestKeysRenderTheCatalogAtApplyTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDoc(idA, "a.txt")
	b.update(func(tx *catalog.Tx) error {
		if err := tx.PutFile(b.ctx, catalog.File{Path: "b.txt", DocID: idA, Dev: 1, Ino: 2, Size: 5, MtimeNs: 1, Mtime: 2e9}); err != nil {
			return err
		}
		return tx.Dirty(b.ctx, catalog.DocKey(idA), catalog.PathKey("b.txt"))
	})
	b.drain()
	got := b.documentJSON(idA)
	if got != b.rendered(idA) || !strings.Contains(got, `"b.txt"`) || !strings.Contains(got, `"copies": 2`) {
		t.Fatalf("document.json:\n%s", got)
	}
}

// A document whose last path went (missing) leaves the index and loses its by-path links,
// while its by-id directory (module output) stays; once purged, the directory goes too.
func TestMissingDocumentKeepsDirectoryUntilPurged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDoc(idA, "gone.txt")
	b.addDoc(idB, "stays.txt")
	b.drain()
	if err := b.store.WriteModuleFile(idA, "m1", "out.txt", []byte("hours of module work")); err != nil {
		t.Fatal(err)
	}
	b.removePaths(idA, "gone.txt")
	b.drain()
	if got := b.indexed(); !slices.Equal(got, []string{idB}) {
		t.Fatalf("indexed %v, want only %s", got, idB)
	}
	if b.link("gone.txt") != "" {
		t.Fatal("by-path link of a removed path kept")
	}
	if _, err := os.Stat(filepath.Join(b.store.DocumentDir(idA), "m1", "out.txt")); err != nil {
		t.Fatalf("module output of a missing document: %v", err)
	}
	if ids, err := b.cat.PurgeMissing(b.ctx, time.Now().Add(time.Hour), 10); err != nil || len(ids) != 1 {
		t.Fatalf("purge: %v %v", ids, err)
	}
	b.drain()
	if b.hasDir(idA) {
		t.Fatal("by-id directory of a purged document kept")
	}
	if !b.hasDir(idB) {
		t.Fatal("another document's directory removed")
	}
}

// A missing document whose content comes back is indexed again with its old directory.
func TestReturnedDocumentIsIndexedAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDoc(idA, "a.txt")
	b.removePaths(idA, "a.txt")
	b.drain()
	b.update(func(tx *catalog.Tx) error {
		if err := tx.SetRetired(b.ctx, idA, false); err != nil {
			return err
		}
		if err := tx.PutFile(b.ctx, catalog.File{Path: "back.txt", DocID: idA, Dev: 1, Ino: 3, Size: 5, MtimeNs: 1, Mtime: 1}); err != nil {
			return err
		}
		return tx.Dirty(b.ctx, catalog.DocKey(idA), catalog.PathKey("back.txt"))
	})
	b.drain()
	if got := b.indexed(); !slices.Equal(got, []string{idA}) {
		t.Fatalf("indexed %v", got)
	}
	if b.link("back.txt") != idA || b.documentJSON(idA) != b.rendered(idA) {
		t.Fatal("returned document not written")
	}
}

// A chunks: key turns the module's content.json into chunks.json and the chunk index; new
// content replaces the old chunks; a document that goes missing loses its chunks.
func TestChunksFollowContent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDoc(idA, "a.txt")
	b.addDoc(idB, "b.txt")
	content := func(id, text string) {
		t.Helper()
		if err := b.store.WriteModuleFile(id, "m1", outbox.ContentFile, []byte(`"`+text+`"`)); err != nil {
			t.Fatal(err)
		}
		if err := b.cat.DirtyKeys(b.ctx, []string{catalog.ChunksKey(id, "m1")}); err != nil {
			t.Fatal(err)
		}
	}
	content(idA, "a zebra crossing")
	content(idB, "a zebra in the zoo")
	b.drain()
	if got := b.chunkHits("zebra"); !slices.Equal(got, []string{idA, idB}) {
		t.Fatalf("chunk hits %v", got)
	}
	chunks, err := os.ReadFile(filepath.Join(b.store.DocumentDir(idA), "m1", outbox.ChunksFile))
	if err != nil || !strings.Contains(string(chunks), "zebra crossing") {
		t.Fatalf("chunks.json: %s, %v", chunks, err)
	}
	content(idA, "a giraffe")
	b.drain()
	if got := b.chunkHits("zebra"); !slices.Equal(got, []string{idB}) {
		t.Fatalf("old chunks kept: %v", got)
	}
	if got := b.chunkHits("giraffe"); !slices.Equal(got, []string{idA}) {
		t.Fatalf("new chunks: %v", got)
	}
	b.removePaths(idB, "b.txt")
	b.drain()
	if got := b.chunkHits("zebra"); len(got) != 0 {
		t.Fatalf("chunks of a missing document kept: %v", got)
	}
	if n := b.chunkCount(); n != 1 {
		t.Fatalf("%d chunks, want 1", n)
	}
}

// Content that cannot be parsed does not get better by retrying: its key is done, no chunk.
func TestBadContentIsNotRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDoc(idA, "a.txt")
	if err := b.store.WriteModuleFile(idA, "m1", outbox.ContentFile, []byte(`{"not": "content"`)); err != nil {
		t.Fatal(err)
	}
	if err := b.cat.DirtyKeys(b.ctx, []string{catalog.ChunksKey(idA, "m1")}); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if n := b.chunkCount(); n != 0 {
		t.Fatalf("%d chunks from bad content", n)
	}
}

// While the index is down, documents and links keep landing on disk; the index part stays
// pending with its error, and the next drain after the index returns catches up. Configure
// runs again after the failure.
func TestIndexDownKeepsMetadataFlowing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDoc(idA, "a.txt")
	b.drain()
	b.index.down.Store(true)
	b.addDoc(idB, "b.txt")
	b.removePaths(idA, "a.txt")
	res, err := b.a.Drain(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.MetaFailed != 0 || res.IndexPending != 2 || res.IndexErr == nil {
		t.Fatalf("drain while the index is down: %+v", res)
	}
	if b.documentJSON(idB) != b.rendered(idB) || b.link("b.txt") != idB || b.link("a.txt") != "" {
		t.Fatal("metadata not written while the index was down")
	}
	if total, index := b.outboxLen(); total != 2 || index != 2 {
		t.Fatalf("outbox %d keys (%d for the index), want 2 and 2", total, index)
	}
	if got := b.indexed(); !slices.Equal(got, []string{idA}) {
		t.Fatalf("indexed while down: %v", got)
	}
	b.index.down.Store(false)
	b.drain()
	if got := b.indexed(); !slices.Equal(got, []string{idB}) {
		t.Fatalf("indexed after the outage: %v", got)
	}
}

// A search backend down at start: Configure fails, documents still land on disk, and the
// first drain with the backend up configures it and writes the index.
func TestConfigureRetriedUntilTheIndexAnswers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.index.down.Store(true)
	b.addDoc(idA, "a.txt")
	res, err := b.a.Drain(b.ctx)
	if err != nil || res.IndexErr == nil || res.IndexPending != 1 || res.MetaFailed != 0 {
		t.Fatalf("drain with the backend down: %+v, %v", res, err)
	}
	if b.configured.Load() != 0 || b.documentJSON(idA) == "" {
		t.Fatalf("configured %d, document %q", b.configured.Load(), b.documentJSON(idA))
	}
	b.index.down.Store(false)
	b.drain()
	if b.configured.Load() != 1 || !slices.Equal(b.indexed(), []string{idA}) {
		t.Fatalf("configured %d, indexed %v", b.configured.Load(), b.indexed())
	}
	b.addDoc(idB, "b.txt")
	b.drain()
	if b.configured.Load() != 1 {
		t.Fatalf("Configure ran again without a failure: %d", b.configured.Load())
	}
}

// A drive: key re-evaluates the drive's marker with its presence from the catalog; a marker
// update that fails stays pending and is retried.
func TestDriveKeysUpdateMarkers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.update(func(tx *catalog.Tx) error {
		if err := tx.SetDrivePresent(b.ctx, "d1", true); err != nil {
			return err
		}
		if err := tx.SetDrivePresent(b.ctx, "d2", false); err != nil {
			return err
		}
		return tx.Dirty(b.ctx, catalog.DriveKey("d1"), catalog.DriveKey("d2"))
	})
	b.drain()
	got := b.markers.take()
	slices.SortFunc(got, func(x, y markerCall) int { return strings.Compare(x.Drive, y.Drive) })
	if want := []markerCall{{"d1", true, false}, {"d2", false, false}}; !slices.Equal(got, want) {
		t.Fatalf("marker updates %+v, want %+v", got, want)
	}
	b.markers.setFail(context.DeadlineExceeded)
	if err := b.cat.DirtyKeys(b.ctx, []string{catalog.DriveKey("d1")}); err != nil {
		t.Fatal(err)
	}
	if res, err := b.a.Drain(b.ctx); err != nil || res.MetaFailed != 1 {
		t.Fatalf("drain with a failing marker: %+v, %v", res, err)
	}
	b.markers.setFail(nil)
	b.drain()
	if calls := b.markers.take(); len(calls) != 2 {
		t.Fatalf("marker updates %+v, want the failed one and its retry", calls)
	}
}

// A path the metadata directory refuses (it would leave by-path) is logged and dropped: no
// retry can fix it. An unknown key kind is dropped too.
func TestUnfixableKeysAreNotRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := b.cat.DirtyKeys(b.ctx, []string{catalog.PathKey("../outside.txt"), "bogus:key"}); err != nil {
		t.Fatal(err)
	}
	res := b.drain()
	if res.Applied != 2 {
		t.Fatalf("drain: %+v", res)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(b.store.Root()), "outside.txt")); err == nil {
		t.Fatal("a link was made outside by-path")
	}
}

// A drain works through the outbox in rounds of Batch keys.
func TestDrainInRounds(t *testing.T) {
	t.Parallel()
	b := setupWith(t, outbox.Config{Batch: 3})
	var ids []string
	for i := range 10 {
		id := "00000000000000" + string(rune('a'+i)) + "0"
		ids = append(ids, id)
		b.addDoc(id, id+".txt")
	}
	if res := b.drain(); res.Applied != 20 {
		t.Fatalf("applied %d, want 20", res.Applied)
	}
	if got := b.indexed(); !slices.Equal(got, ids) {
		t.Fatalf("indexed %v", got)
	}
	// Each round's upsert (7 rounds of 3 keys, each with a doc: key) was prepared, none sent
	// whole.
	if p, u := b.index.prepared.Load(), b.index.upserts.Load(); p != 7 || u != 0 {
		t.Fatalf("%d upserts prepared and %d sent whole, want the 7 rounds' prepared", p, u)
	}
}

// A round's index write is prepared while the round before it is written to the index: the
// first round's write waits until the second round's upsert is prepared, which it would wait
// for in vain if preparing were part of each write.
func TestIndexPreparedWhileThePreviousRoundIsWritten(t *testing.T) {
	t.Parallel()
	b := setupWith(t, outbox.Config{Batch: 2}) // a round: one doc: key and its path: key
	b.addDoc(idA, "a.txt")
	b.addDoc(idB, "b.txt")
	var waited, missed atomic.Bool
	b.index.beforeWrite = func() { // on the drain's index goroutine: no t.Fatal here
		if waited.Swap(true) {
			return
		}
		deadline := time.After(wait.Timeout)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for b.index.prepared.Load() < 2 {
			select {
			case <-deadline:
				missed.Store(true)
				return
			case <-tick.C:
			}
		}
	}
	b.drain()
	if missed.Load() {
		t.Fatal("the second round's index write was not prepared while the first was written")
	}
	if p := b.index.prepared.Load(); p != 2 {
		t.Fatalf("%d upserts prepared, want 2", p)
	}
	if got := b.indexed(); !slices.Equal(got, []string{idA, idB}) {
		t.Fatalf("indexed %v", got)
	}
}

// Run drains on Wake, retries every RetryInterval while something failed (without another
// Wake), and returns nil when its context ends.
func TestRunDrainsOnWakeAndRetries(t *testing.T) {
	t.Parallel()
	b := setupWith(t, outbox.Config{Gather: time.Millisecond, RetryInterval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- b.a.Run(ctx) }()

	b.addDoc(idA, "a.txt")
	b.a.Wake()
	wait.For(t, "the woken drain", func() bool { n, _ := b.outboxLen(); return n == 0 })

	b.index.down.Store(true)
	b.addDoc(idC, "c.txt")
	b.a.Wake()
	wait.For(t, "metadata written while the index is down", func() bool { return b.documentJSON(idC) != "" })
	b.index.down.Store(false)
	wait.For(t, "the index caught up by a retry", func() bool { n, _ := b.outboxLen(); return n == 0 })
	if got := b.indexed(); !slices.Equal(got, []string{idA, idC}) {
		t.Fatalf("indexed %v", got)
	}
	cancel()
	wait.Returned(t, "Run", done)
}

// A path whose content changed is re-pointed at its new document; a removed path's link goes
// and so do by-path directories it leaves empty.
func TestLinksFollowPaths(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDoc(idA, "a.txt", "deep/er/x.txt", "deep/keep.txt")
	b.drain()
	b.addDoc(idB) // the new content of a.txt
	b.update(func(tx *catalog.Tx) error {
		if err := tx.PutFile(b.ctx, catalog.File{Path: "a.txt", DocID: idB, Dev: 1, Ino: 9, Size: 5, MtimeNs: 2, Mtime: 2}); err != nil {
			return err
		}
		return tx.Dirty(b.ctx, catalog.PathKey("a.txt"), catalog.DocKey(idA), catalog.DocKey(idB))
	})
	b.removePaths(idA, "deep/er/x.txt")
	b.drain()
	if got := b.link("a.txt"); got != idB {
		t.Fatalf("a.txt -> %q, want %s", got, idB)
	}
	if _, err := os.Lstat(filepath.Join(b.store.Root(), "by-path", "deep", "er")); !os.IsNotExist(err) {
		t.Fatalf("empty by-path directory kept: %v", err)
	}
	if b.link("deep/keep.txt") != idA {
		t.Fatal("a sibling link went with the removed one")
	}
}

// A metadata directory deleted by hand is rebuilt, after a restart, by re-dirtying every
// document.
func TestDeletedMetadataRebuiltFromTheCatalog(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDoc(idA, "a.txt")
	b.addDoc(idB, "b.txt")
	b.drain()
	for _, d := range []string{"by-id", "by-path"} {
		if err := os.RemoveAll(filepath.Join(b.store.Root(), d)); err != nil {
			t.Fatal(err)
		}
	}
	b.open()
	if err := b.cat.DirtyAllDocs(b.ctx); err != nil {
		t.Fatal(err)
	}
	b.drain()
	for _, id := range []string{idA, idB} {
		if got := b.documentJSON(id); got != b.rendered(id) {
			t.Fatalf("document.json of %s not rebuilt: %q", id, got)
		}
	}
}

// A document whose every path is on an absent drive stays in the index, marked offline, and
// comes back online when its drive does.
func TestOfflineDocumentsStaySearchable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDoc(idA, "archive/usb/photo.jpg")
	b.addDoc(idB, "local.txt")
	b.drain()
	setPresent := func(present bool) {
		t.Helper()
		b.update(func(tx *catalog.Tx) error {
			if err := tx.SetDrivePresent(b.ctx, "usb", present); err != nil {
				return err
			}
			return tx.Dirty(b.ctx, catalog.DocKey(idA), catalog.DriveKey("usb"))
		})
		b.drain()
	}
	offline := func() []string {
		t.Helper()
		res, err := b.index.Files().Search(b.ctx, search.Query{Filter: "offline = true", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range res.Hits {
			var d struct{ ID string }
			if err := json.Unmarshal(h, &d); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, d.ID)
		}
		return ids
	}
	setPresent(false)
	if got := offline(); !slices.Equal(got, []string{idA}) {
		t.Fatalf("offline hits %v, want %s", got, idA)
	}
	if !strings.Contains(b.documentJSON(idA), `"offline": true`) || !slices.Equal(b.indexed(), []string{idA, idB}) {
		t.Fatalf("offline document: %s, indexed %v", b.documentJSON(idA), b.indexed())
	}
	setPresent(true)
	if got := offline(); len(got) != 0 {
		t.Fatalf("offline hits %v after the drive returned", got)
	}
}

// A drain waits while another process holds the outbox lock file (two daemons sharing one
// state directory take turns), and then applies everything.
func TestDrainWaitsForTheLockFile(t *testing.T) {
	t.Parallel()
	lock := filepath.Join(t.TempDir(), "outbox.lock")
	b := setupWith(t, outbox.Config{LockFile: lock})
	b.addDoc(idA, "docs/a.txt")
	// The other process: its own open file description, so flock excludes this one.
	other, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	done := make(chan outbox.Result, 1)
	go func() {
		res, _ := b.a.Drain(b.ctx)
		done <- res
	}()
	select {
	case res := <-done:
		t.Fatalf("drain finished (%+v) while another process held the lock", res)
	case <-time.After(300 * time.Millisecond): // a negative check: it must still be waiting
	}
	other.Close() // releases the lock
	select {
	case res := <-done:
		if res.Applied != 2 {
			t.Fatalf("applied %d keys after the lock was released, want 2", res.Applied)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("drain still waiting after the lock was released")
	}
	if got, want := b.documentJSON(idA), b.rendered(idA); got != want {
		t.Fatalf("document.json:\n got %s\nwant %s", got, want)
	}
}

// Applied keys are recorded in groups whose flush runs behind the next rounds: every group is
// recorded once the drain returns, with the counts of all of them, and a second drain finds
// nothing left.
func TestFlushGroupsBehindTheRounds(t *testing.T) {
	t.Parallel()
	b := setupWith(t, outbox.Config{Batch: 10, FlushKeys: 25})
	const docs = 60
	for i := range docs {
		id := fmt.Sprintf("%016x", i+1)
		b.addDoc(id, "d/"+id+".txt")
	}
	if res := b.drain(); res.Applied != 2*docs {
		t.Fatalf("applied %d keys, want %d", res.Applied, 2*docs)
	}
	if got := len(b.indexed()); got != docs {
		t.Fatalf("indexed %d documents, want %d", got, docs)
	}
	if res := b.drain(); res.Applied != 0 {
		t.Fatalf("a second drain applied %d keys, want none", res.Applied)
	}
}

// A round's by-path links are made while the next round's documents are written, never
// before their own documents: a reader walking by-path during a drain finds every link
// leading to a document.json.
func TestLinksNeverLeadToUnwrittenDocuments(t *testing.T) {
	t.Parallel()
	b := setupWith(t, outbox.Config{Batch: 20})
	const docs = 600
	for i := range docs {
		id := fmt.Sprintf("%016x", i+1)
		b.addDoc(id, fmt.Sprintf("d%02d/%s.txt", i%30, id))
	}
	byPath := filepath.Join(b.store.Root(), "by-path")
	done := make(chan struct{})
	midways := make(chan int) // walks that saw some links but not all
	go func() {
		midway := 0
		for {
			select {
			case <-done:
				midways <- midway
				return
			default:
			}
			links := 0
			_ = filepath.WalkDir(byPath, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.Type()&fs.ModeSymlink == 0 {
					return nil
				}
				links++
				if _, err := os.Stat(filepath.Join(p, "document.json")); err != nil {
					t.Errorf("by-path link %s leads to no document: %v", p, err)
				}
				return nil
			})
			if links > 0 && links < docs {
				midway++
			}
		}
	}()
	b.drain()
	close(done)
	if <-midways == 0 {
		t.Fatal("the reader never saw the drain mid-way; the test checked nothing")
	}
}
