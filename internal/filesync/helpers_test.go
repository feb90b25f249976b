package filesync_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/drives"
	"github.com/homeindex/homeindex/internal/filesync"
	"github.com/homeindex/homeindex/protocol"
)

// bundle is a Syncer over a files tree in a temp dir, with a real catalog. The archive is
// <root>/archive; the catalog lives outside the tree.
type bundle struct {
	t       *testing.T
	ctx     context.Context
	root    string
	cat     *catalog.Catalog
	archive drives.Archive
	markers *filesync.Markers
	s       *filesync.Syncer
	cfg     filesync.Config
	// appeared records DriveAppeared calls, in order.
	appeared []string
}

// setup builds a bundle; opts adjust the Config before the Syncer is built.
func setup(t *testing.T, opts ...func(*filesync.Config)) *bundle {
	t.Helper()
	base := t.TempDir()
	b := &bundle{t: t, ctx: context.Background(), root: filepath.Join(base, "files")}
	if err := os.MkdirAll(b.root, 0o755); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(filepath.Join(base, "state", "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	b.cat = cat
	b.cfg = filesync.Config{Root: b.root, ArchiveRel: "archive", HashWorkers: 2,
		DriveAppeared: func(name string) { b.appeared = append(b.appeared, name) }}
	for _, o := range opts {
		o(&b.cfg)
	}
	b.open()
	return b
}

// open (re)builds the Syncer over the same catalog and tree, as a daemon restart does.
func (b *bundle) open() {
	log := zerolog.New(zerolog.NewTestWriter(b.t))
	b.archive = drives.New(filepath.Join(b.root, filepath.FromSlash(b.cfg.ArchiveRel)))
	b.markers = filesync.NewMarkers(b.cat, b.archive, log)
	b.s = filesync.New(b.cfg, b.cat, b.archive, b.markers, log)
}

// sync runs one sync and fails the test on error.
func (b *bundle) sync() filesync.Stats {
	b.t.Helper()
	st, err := b.s.Sync(b.ctx)
	if err != nil {
		b.t.Fatalf("sync: %v", err)
	}
	return st
}

func (b *bundle) abs(rel string) string { return filepath.Join(b.root, filepath.FromSlash(rel)) }

// write writes a file (and its parents) and returns its document id.
func (b *bundle) write(rel, content string) string {
	b.t.Helper()
	p := b.abs(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.t.Fatal(err)
	}
	return idOf(content)
}

// writeAged writes a file whose mtime is two hours old (settled under any SettleTime used here).
func (b *bundle) writeAged(rel, content string) string {
	b.t.Helper()
	id := b.write(rel, content)
	b.setMtime(rel, time.Now().Add(-2*time.Hour))
	return id
}

func (b *bundle) remove(rel string) {
	b.t.Helper()
	if err := os.RemoveAll(b.abs(rel)); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bundle) mkdir(rel string) {
	b.t.Helper()
	if err := os.MkdirAll(b.abs(rel), 0o755); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bundle) setMtime(rel string, t time.Time) {
	b.t.Helper()
	if err := os.Chtimes(b.abs(rel), t, t); err != nil {
		b.t.Fatal(err)
	}
}

// idOf is the document id of content: xxh64, seed 0, 16 lowercase hex digits.
func idOf(content string) string { return fmt.Sprintf("%016x", xxhash.Sum64String(content)) }

// doc renders a document from the catalog and returns it with its state.
func (b *bundle) doc(id string) (protocol.Document, catalog.DocState) {
	b.t.Helper()
	d, st, err := b.cat.Document(b.ctx, id)
	if err != nil {
		b.t.Fatal(err)
	}
	return d, st
}

// live renders a document that must be live.
func (b *bundle) live(id string) protocol.Document {
	b.t.Helper()
	d, st := b.doc(id)
	if st != catalog.DocLive {
		b.t.Fatalf("document %s: state %v, want live", id, st)
	}
	return d
}

// state returns a document's state.
func (b *bundle) state(id string) catalog.DocState {
	b.t.Helper()
	_, st := b.doc(id)
	return st
}

// files returns the catalog's path rows by path.
func (b *bundle) files() map[string]catalog.File {
	b.t.Helper()
	out := map[string]catalog.File{}
	if err := b.cat.Files(b.ctx, func(f catalog.File) error { out[f.Path] = f; return nil }); err != nil {
		b.t.Fatal(err)
	}
	return out
}

// paths returns the catalog's paths, sorted.
func (b *bundle) paths() []string {
	b.t.Helper()
	var out []string
	for p := range b.files() {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// takeOutbox returns the pending outbox keys, sorted, and marks them all applied.
func (b *bundle) takeOutbox() []string {
	b.t.Helper()
	es, err := b.cat.PendingOutbox(b.ctx, 0, 1_000_000)
	if err != nil {
		b.t.Fatal(err)
	}
	keys := make([]string, 0, len(es))
	for i := range es {
		keys = append(keys, es[i].Key)
		es[i].MetaDone, es[i].IndexDone = true, true
	}
	if err := b.cat.OutboxDone(b.ctx, es); err != nil {
		b.t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

// report reads the last sync's missing report as the catalog keeps it.
func (b *bundle) report() filesync.MissingReport {
	b.t.Helper()
	var r filesync.MissingReport
	ok, err := b.cat.MetaJSON(b.ctx, catalog.MetaMissingReport, &r)
	if err != nil || !ok {
		b.t.Fatalf("missing report: found %v, %v", ok, err)
	}
	return r
}

// marker returns a drive's marker state and content ("" when it has none).
func (b *bundle) marker(drive string) (drives.State, string) {
	b.t.Helper()
	s, content, ok, err := b.archive.Marker(drive)
	if err != nil {
		b.t.Fatal(err)
	}
	if !ok {
		return "", ""
	}
	return s, content
}

// writeMarker writes a marker file by hand, as an earlier run (or the Python core) left it.
func (b *bundle) writeMarker(drive string, s drives.State, content string) {
	b.t.Helper()
	b.write(filepath.Join(b.cfg.ArchiveRel, drives.MarkerName(drive, s)), content)
}

// putDoc records a document with paths directly in the catalog (as a legacy import does: the
// rows carry no stat), with next.
func (b *bundle) putDoc(id, next string, paths ...string) {
	b.t.Helper()
	err := b.cat.Update(b.ctx, func(t *catalog.Tx) error {
		if _, err := t.InsertDocument(b.ctx, catalog.DocRow{ID: id, Type: "text/plain", Size: 1, Next: next, Version: protocol.CurrentVersion}); err != nil {
			return err
		}
		for _, p := range paths {
			d, _ := drives.DriveOf(b.cfg.ArchiveRel, p)
			if err := t.PutFile(b.ctx, catalog.File{Path: p, DocID: id, Size: 1, Mtime: 1, Drive: d}); err != nil {
				return err
			}
		}
		return t.Dirty(b.ctx, catalog.DocKey(id))
	})
	if err != nil {
		b.t.Fatal(err)
	}
}
