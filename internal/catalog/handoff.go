package catalog

import (
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/homeindex/homeindex/protocol"
)

// The handoff carries the documents a sync has just created to the outbox applier in memory,
// so the applier need not read them back from the catalog (documents by id, their paths by
// document: random keys in two large B-trees, 6% of a first sync's CPU).
//
// A handed document is exact or unused. It is recorded by Tx.DirtyNew with the outbox seqs its
// doc: and path: keys were given, from the very rows the transaction wrote, and published
// when the transaction commits. The applier uses it only for an outbox entry with that key and
// that seq. Seqs are never given twice in a catalog's life (seqQuery), and every later change
// of the document dirties its key again under a new seq, so a match means the entry is the
// change the handed document describes. Anything else (an entry published after the applier
// read its key, a key another process applied, a document with a second path) finds no match
// and is rendered from the catalog as before. Nothing is stored: a crash loses only the
// shortcut, the outbox rows are committed with the change.

// handoffCap bounds the documents waiting to be taken (about 85 bytes each). A first sync
// walks faster than the applier writes, so much of a large tree waits at once (37,000 of
// 100,000 files at the most, measured); past the cap, documents are rendered from the catalog.
const handoffCap = 1 << 16

// handed is a document created with one local path, kept small: its id and path are spans of
// its batch's names, its type and next module indexes into handoff.strs.
type handed struct {
	docSeq             int64 // seq of "doc:"+id; "path:"+path has docSeq+1
	size               int64
	mtime              float64
	version            int
	typ, next          uint16
	idAt, pathAt, ends uint32 // id is names[idAt:pathAt], path names[pathAt:ends]
}

func (d *handed) pathSeq() int64 { return d.docSeq + 1 }

// batch is one transaction's documents, in seq order, and the bytes of their ids and paths.
type batch struct {
	names string
	docs  []handed
}

func (b *batch) id(d *handed) string   { return b.names[d.idAt:d.pathAt] }
func (b *batch) path(d *handed) string { return b.names[d.pathAt:d.ends] }

// handing is what one transaction hands over, gathered by DirtyNew.
type handing struct {
	docs  []handed
	strs  []string // each document's type and next module, for publish to intern
	names []byte
}

func (t *handing) add(d handed, id, path, typ, next string) {
	if len(t.names)+len(id)+len(path) > math.MaxUint32 {
		return // not handed: read from the catalog
	}
	d.idAt = uint32(len(t.names))
	t.names = append(t.names, id...)
	d.pathAt = uint32(len(t.names))
	t.names = append(t.names, path...)
	d.ends = uint32(len(t.names))
	t.docs = append(t.docs, d)
	t.strs = append(t.strs, typ, next)
}

// handoff is the queue of published documents, in seq order (transactions commit in seq
// order: SQLite has one writer, and seqs are given inside the write transaction), one batch
// per transaction.
type handoff struct {
	mu      sync.Mutex
	batches []batch // batches[0].docs[0] is the next to take
	waiting int
	limit   int // handoffCap; tests set less

	strs  []string          // types and next modules, interned
	index map[string]uint16 // their indexes in strs

	hits, misses atomic.Int64
}

// internMax bounds the interned strings (types come from a fixed table; this is a guard: a
// document whose type would pass it is not handed).
const internMax = 1024

// publish appends a committed transaction's documents, as many as the cap leaves room for.
func (h *handoff) publish(t *handing) {
	if len(t.docs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	limit := h.limit
	if limit == 0 {
		limit = handoffCap
	}
	n := min(len(t.docs), limit-h.waiting)
	if n <= 0 {
		return
	}
	b := batch{names: string(t.names[:t.docs[n-1].ends]), docs: make([]handed, 0, n)}
	for i, d := range t.docs[:n] {
		typ, ok1 := h.intern(t.strs[2*i])
		next, ok2 := h.intern(t.strs[2*i+1])
		if ok1 && ok2 {
			d.typ, d.next = typ, next
			b.docs = append(b.docs, d)
		}
	}
	if len(b.docs) > 0 {
		h.batches = append(h.batches, b)
		h.waiting += len(b.docs)
	}
}

// intern returns s's index in h.strs, adding it if there is room.
func (h *handoff) intern(s string) (uint16, bool) {
	if i, ok := h.index[s]; ok {
		return i, true
	}
	if len(h.strs) >= internMax {
		return 0, false
	}
	if h.index == nil {
		h.index = make(map[string]uint16)
	}
	h.index[s] = uint16(len(h.strs))
	h.strs = append(h.strs, s)
	return h.index[s], true
}

// render is the document as renderDocuments renders it from the rows DirtyNew saw written.
func (h *handoff) render(b *batch, d *handed) protocol.Document {
	doc := protocol.Document{ID: b.id(d), Type: h.strs[d.typ], Size: d.size, Next: h.strs[d.next], Version: d.version}
	startPaths(&doc)
	addPath(&doc, protocol.PathEntry{Path: b.path(d), Mtime: d.mtime}, false, true)
	return doc
}

// front returns the next document to take and its batch, or nil.
func (h *handoff) front() (*batch, *handed) {
	if len(h.batches) == 0 {
		return nil, nil
	}
	b := &h.batches[0]
	return b, &b.docs[0]
}

// pop forgets the front document; a batch goes, with its names, when its last one does.
func (h *handoff) pop() {
	h.waiting--
	if b := &h.batches[0]; len(b.docs) > 1 {
		b.docs = b.docs[1:]
		return
	}
	h.batches[0] = batch{}
	h.batches = h.batches[1:]
}

// Handoff is what Catalog.TakeHandoff found for a page of outbox entries.
type Handoff struct {
	// Docs holds the documents of doc: entries, by id, as Documents renders them.
	Docs map[string]Rendered
	// PathDocs holds the document of path: entries, by path, as FileDocs finds it.
	PathDocs map[string]string
}

// TakeHandoff returns the handed documents of a page of pending outbox entries (in seq
// order, as PendingOutbox returns them), and forgets every handed document up to the page's
// last seq: later pages have higher seqs. Entries it does not cover are read from the catalog.
// A document whose id a chunks: entry of the page also names is left out, so one rendering
// from the catalog serves both.
func (c *Catalog) TakeHandoff(entries []OutboxEntry) Handoff {
	var out Handoff
	if len(entries) == 0 {
		return out
	}
	h := &c.handoff
	h.mu.Lock()
	for _, e := range entries {
		b, d := h.front()
		for d != nil && d.pathSeq() < e.Seq {
			h.pop()
			b, d = h.front()
		}
		if d == nil {
			break
		}
		switch e.Seq {
		case d.docSeq:
			if id, ok := strings.CutPrefix(e.Key, KeyDoc); ok && id == b.id(d) {
				if out.Docs == nil {
					out.Docs = make(map[string]Rendered)
				}
				out.Docs[id] = Rendered{Doc: h.render(b, d), State: DocLive}
			}
		case d.pathSeq():
			if p, ok := strings.CutPrefix(e.Key, KeyPath); ok && p == b.path(d) {
				if out.PathDocs == nil {
					out.PathDocs = make(map[string]string)
				}
				out.PathDocs[p] = b.id(d)
			}
		}
	}
	last := entries[len(entries)-1].Seq
	for _, d := h.front(); d != nil && d.pathSeq() <= last; _, d = h.front() {
		h.pop()
	}
	h.mu.Unlock()
	var keys int // doc: and path: entries, the ones a handed document could serve
	for _, e := range entries {
		if id, _, ok := ParseChunksKey(e.Key); ok {
			delete(out.Docs, id)
		} else if strings.HasPrefix(e.Key, KeyDoc) || strings.HasPrefix(e.Key, KeyPath) {
			keys++
		}
	}
	found := len(out.Docs) + len(out.PathDocs)
	h.hits.Add(int64(found))
	h.misses.Add(int64(keys - found))
	return out
}

// HandoffCounts returns how many doc: and path: entries TakeHandoff served from memory, and
// how many it left to the catalog.
func (c *Catalog) HandoffCounts() (hits, misses int64) {
	return c.handoff.hits.Load(), c.handoff.misses.Load()
}
