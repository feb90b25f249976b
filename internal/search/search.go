// Package search is homeindexd's search index: one Index with two collections (files and
// chunks) behind one interface, with two backends: an embedded one (SQLite FTS5 in one file,
// the default) and Meilisearch. Both take the same Meilisearch filter syntax subset and give it
// the same meaning, so callers never know which backend they talk to.
package search

import (
	"context"
	"encoding/json"
	"errors"
)

// Collection is one searchable set of JSON documents keyed by the string field "id".
type Collection interface {
	// Configure sets filterable and sortable attributes (idempotent; cheap when unchanged).
	Configure(ctx context.Context, s Settings) error
	// Upsert replaces whole documents (Meilisearch AddDocuments semantics). Returns nil only
	// once the write is applied and visible to Search; a failed Meilisearch task is an error.
	// Every document must be a JSON object whose "id" is a valid document id (see ValidateID);
	// otherwise nothing is written and the error wraps ErrInvalidDocument.
	Upsert(ctx context.Context, docs []json.RawMessage) error
	// Delete removes documents by id. Unknown ids, and ids that could never be stored, are
	// ignored.
	Delete(ctx context.Context, ids []string) error
	// DeleteByFilter removes every document matching a filter over filterable attributes.
	DeleteByFilter(ctx context.Context, filter string) error
	// Search runs a query. Hits are the stored documents, best first.
	Search(ctx context.Context, q Query) (Result, error)
	// Count returns the number of documents.
	Count(ctx context.Context) (int64, error)
	// IDs calls fn for every document id (paged; for reconciliation and consistency checks).
	// An error from fn stops the walk and is returned as is.
	IDs(ctx context.Context, fn func(id string) error) error
}

// PreparedUpsert is an Upsert cut in two: its documents are checked and converted for the
// backend when it is made (PrepareUpsert), and Write does the rest, as Upsert would. A caller
// with a stream of batches prepares the next one while the last is written: an embedded
// index's write is single-threaded, its preparation runs on every core.
type PreparedUpsert interface {
	Write(ctx context.Context) error
}

// upsertPreparer is a Collection that can prepare an upsert apart from its write.
type upsertPreparer interface {
	PrepareUpsert(docs []json.RawMessage) (PreparedUpsert, error)
}

// PrepareUpsert prepares docs for c: the error is one Upsert would return for them, and
// Write then does what Upsert would do. A collection that cannot split the work prepares
// nothing, and Write is its Upsert.
func PrepareUpsert(c Collection, docs []json.RawMessage) (PreparedUpsert, error) {
	if p, ok := c.(upsertPreparer); ok {
		return p.PrepareUpsert(docs)
	}
	return plainUpsert{c: c, docs: docs}, nil
}

// PrepareMarshaled is PrepareUpsert for documents that are json.Marshal's output (valid and
// compact; the outbox's chunks): a backend that can (canonicalPreparer) prepares each straight
// from its bytes, without checking or compacting it again. Anything else is PrepareUpsert.
func PrepareMarshaled(c Collection, docs []json.RawMessage) (PreparedUpsert, error) {
	p, ok := c.(canonicalPreparer)
	if !ok {
		return PrepareUpsert(c, docs)
	}
	marshaled := make([]bool, len(docs))
	for i := range marshaled {
		marshaled[i] = true
	}
	return p.prepareCanonical(docs, marshaled)
}

// plainUpsert is the PreparedUpsert of a collection without upsertPreparer.
type plainUpsert struct {
	c    Collection
	docs []json.RawMessage
}

func (u plainUpsert) Write(ctx context.Context) error { return u.c.Upsert(ctx, u.docs) }

// Settings are the attributes a collection can filter and sort on. An attribute also covers
// its nested fields: "read" makes "read.lang" filterable.
type Settings struct {
	Filterable, Sortable []string
}

// Query is one search request.
type Query struct {
	// Q is the text query. Every word must match; the last word also matches as a prefix
	// unless Q ends with a space. Empty Q matches every document.
	Q string
	// Filter is a Meilisearch filter expression over filterable attributes ("" for none).
	Filter string
	// Sort lists "attribute:asc" or "attribute:desc" over sortable attributes. Sort takes
	// precedence over text relevance on both backends (on Meilisearch once Configure has
	// put its sort ranking rule first). Numbers sort before strings, missing values last.
	Sort []string
	// Limit is the maximum number of hits (0 means DefaultLimit, at most MaxLimit). Offset
	// skips hits; every match can be reached.
	Limit, Offset int
}

// Result is the answer to a Query.
type Result struct {
	Hits []json.RawMessage
	// Total is the exact number of matching documents.
	Total int64
}

// Index is a search backend with two collections: files (primary key id) and chunks.
type Index interface {
	Files() Collection
	Chunks() Collection
	// Name is "embedded" or "meilisearch".
	Name() string
	Close() error
}

const (
	// DefaultLimit is the number of hits returned when Query.Limit is 0.
	DefaultLimit = 20
	// MaxLimit is the most hits one query returns.
	MaxLimit = 1000
	// meiliMaxTotalHits is the Meilisearch index setting pagination.maxTotalHits: above any
	// collection this daemon indexes, so totals are exact and paging reaches every hit.
	meiliMaxTotalHits = 1 << 30
	// broadMatch is the match count above which the embedded backend reads a filter-only page
	// by walking the sort index instead of sorting the matches.
	broadMatch = 1000
	// MaxIDBytes is the longest document id Meilisearch accepts.
	MaxIDBytes = 511
)

var (
	// ErrInvalidFilter reports a filter or sort the backend rejects: bad syntax, or an
	// attribute that is not filterable or sortable. The wrapping error says what is wrong.
	ErrInvalidFilter = errors.New("invalid filter")
	// ErrInvalidDocument reports a document the backend cannot store (not a JSON object, or a
	// missing or malformed id). The wrapping error names the documents.
	ErrInvalidDocument = errors.New("invalid document")
	// ErrUnavailable reports a backend that cannot be reached right now (connection refused,
	// 5xx, timeout). The operation did not complete; retry later.
	ErrUnavailable = errors.New("search backend unavailable")
)

// ValidateID reports whether id can be a document id on every backend: 1 to MaxIDBytes bytes
// of [A-Za-z0-9_-] (Meilisearch's rule).
func ValidateID(id string) bool {
	if len(id) == 0 || len(id) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// pageBounds turns a Query's Limit and Offset into the window actually served, honouring
// DefaultLimit and MaxLimit.
func pageBounds(q Query) (limit, offset int) {
	limit, offset = q.Limit, max(q.Offset, 0)
	if limit <= 0 {
		limit = DefaultLimit
	}
	return min(limit, MaxLimit), offset
}
