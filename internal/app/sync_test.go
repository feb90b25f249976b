package app

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// The sync path end to end: a synced file reaches the catalog, its document.json, its by-path
// link and the search index (word search included). What each component does on its own is
// specified in internal/filesync, internal/outbox and internal/catalog.
func TestAddCreatesDocumentLinkAndIndexEntry(t *testing.T) {
	e := newTestEnv(t)
	id := e.write("docs/hello.txt", "hello world\n")
	mt := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	e.setMtime("docs/hello.txt", mt)
	st := e.sync()
	if st.Added != 1 || st.Hashed != 1 || st.NewDocs != 1 {
		t.Fatalf("stats: %+v", st)
	}
	d := e.doc(id)
	wantMtime := 1714979289.1234
	want := protocol.Document{ID: id, Type: "text/plain", Size: 12, Paths: protocol.Paths{{Path: "docs/hello.txt", Mtime: wantMtime}},
		PathsList: []string{"docs/hello.txt"}, Copies: 1, Mtime: wantMtime, Version: protocol.CurrentVersion}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("document:\n got %+v\nwant %+v", d, want)
	}
	if got := e.link("docs/hello.txt"); got != id {
		t.Fatalf("by-path link -> %q, want %s", got, id)
	}
	if !e.indexed(id) {
		t.Fatal("document not in the index")
	}
	if got := e.search("hello", ""); !reflect.DeepEqual(got, []string{id}) {
		t.Fatalf("word search: %v", got)
	}
}

// The first sync of a tree, as `homeindexd sync` runs it, loads the search index with its
// expression indexes dropped and builds them once its documents are in (search.BeginLoad);
// for later syncs BeginFirstLoad does nothing. Search by a filter answers the same either way.
func TestFirstSyncBuildsTheIndexesOnceItsDocumentsAreIn(t *testing.T) {
	e := newTestEnv(t)
	big := e.write("a/big.txt", strings.Repeat("x", 5000))
	small := e.write("a/small.txt", "tiny")
	e.open()
	end := e.app.BeginFirstLoad(e.ctx)
	e.sync()
	end()
	const built = "indexes built after the first sync"
	if n := strings.Count(e.logBuf.String(), built); n != 1 {
		t.Fatalf("first sync: %q logged %d times, want once; log:\n%s", built, n, e.logBuf.String())
	}
	if got := e.search("", "size > 100"); !reflect.DeepEqual(got, []string{big}) {
		t.Fatalf("size > 100 after the first sync: %v, want [%s]", got, big)
	}
	e.write("a/more.txt", "more")
	end = e.app.BeginFirstLoad(e.ctx)
	e.sync()
	end()
	if n := strings.Count(e.logBuf.String(), built); n != 1 {
		t.Fatalf("second sync: %q logged %d times in all, want once", built, n)
	}
	if got := e.search("", "size < 100"); len(got) != 2 || !slices.Contains(got, small) {
		t.Fatalf("size < 100 after the second sync: %v, want small.txt's and more.txt's documents", got)
	}
}

// The metadata directory, when it lies inside INDEX_DIRECTORY, is handed to the syncer as a
// skipped directory: what the outbox writes there is never synced back; markers never are.
func TestMarkersAndMetadataDirAreNeverIndexed(t *testing.T) {
	e := newTestEnv(t)
	e.vars["METADATA_DIRECTORY"] = e.abs("meta")
	e.meta = e.abs("meta")
	e.write("Foo-status-ready", "x")
	e.write("sub/Bar-status-pending", "x")
	e.write("archive/Baz-status-ready", "x")
	id := e.write("real.txt", "real")
	e.sync()
	e.sync() // the metadata written by the first sync must not be picked up by the second
	ids := e.search("", "")
	if !reflect.DeepEqual(ids, []string{id}) {
		t.Fatalf("indexed: %v", ids)
	}
	if got := e.search("", `paths_list = "Foo-status-ready"`); len(got) != 0 {
		t.Fatalf("marker indexed: %v", got)
	}
}

// SETTLE_TIME reaches the syncer: a file written just now is left for a later sync.
func TestSettleTimeReachesTheSyncer(t *testing.T) {
	e := newTestEnv(t, "SETTLE_TIME", "30s")
	e.write("fresh.txt", "just written")
	if st := e.sync(); st.Unsettled != 1 || st.Added != 0 {
		t.Fatalf("stats: %+v", st)
	}
}

// A first sync hands the documents it creates to the outbox in memory (catalog.TakeHandoff):
// every new document with one local path is written from there, a document with two copies
// from the catalog, and each ends on disk and in the index as the catalog renders it (sync's
// Verify compares every document.json with the catalog's rendering).
func TestFirstSyncHandsItsDocumentsToTheOutbox(t *testing.T) {
	e := newTestEnv(t)
	var ids []string
	for i := range 20 {
		ids = append(ids, e.write(fmt.Sprintf("d%d/f%02d.txt", i%3, i), fmt.Sprintf("file %d\n", i)))
	}
	dup := e.write("copies/a.txt", "the same\n")
	e.write("copies/b.txt", "the same\n")
	e.sync()
	hits, misses := e.app.Catalog.HandoffCounts()
	// 20 documents and their paths, and the first copy's path; the copied document itself and
	// the second copy's path come from the catalog.
	if hits != 41 || misses != 2 {
		t.Fatalf("handoff: %d hits, %d misses; want 41, 2", hits, misses)
	}
	if d := e.doc(dup); d.Copies != 2 {
		t.Fatalf("copied document: %+v, want 2 copies", d)
	}
	for _, id := range ids {
		if !e.indexed(id) {
			t.Fatalf("%s not in the index", id)
		}
	}
}
