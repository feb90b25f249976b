package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/meilitest"
)

// meiliOpener returns an opener giving each caller its own pair of indexes on srv.
func meiliOpener(srv *meilitest.Server) func(t *testing.T) Index {
	var n atomic.Int64
	return func(t *testing.T) Index {
		t.Helper()
		i := n.Add(1)
		ix, err := OpenMeilisearch(ctxT(t), MeiliConfig{
			Host: srv.URL, APIKey: srv.MasterKey,
			FilesIndex: fmt.Sprintf("files%d", i), ChunksIndex: fmt.Sprintf("chunks%d", i),
			Timeout: 10 * time.Second,
		})
		if err != nil {
			t.Fatalf("open meilisearch: %v", err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
}

func TestConformanceMeilisearch(t *testing.T) {
	t.Parallel()
	runConformance(t, meiliOpener(meilitest.Start(t)))
}

// TestMeiliFailedTaskIsAnError: Meilisearch reports bad documents and bad delete filters
// through failed tasks, which WaitForTask returns without an error; they must be errors.
func TestMeiliFailedTaskIsAnError(t *testing.T) {
	t.Parallel()
	c := meiliOpener(meilitest.Start(t))(t).Files()

	// An id Meilisearch rejects, with our validation bypassed: the whole batch fails.
	err := c.(*meiliCollection).addDocuments(ctxT(t), []json.RawMessage{json.RawMessage(`{"id":"good"}`), json.RawMessage(`{"id":"bad/1"}`)})
	var te *TaskError
	if !errors.As(err, &te) || te.Status != "failed" || te.Code != "invalid_document_id" {
		t.Fatalf("error = %v, want a failed *TaskError with code invalid_document_id", err)
	}
	if !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("error = %v, want it to wrap ErrInvalidDocument", err)
	}

	// A document our validation accepts but Meilisearch rejects: a malformed _geo field,
	// checked once _geo is filterable.
	if err := c.Configure(ctxT(t), Settings{Filterable: []string{"_geo"}}); err != nil {
		t.Fatal(err)
	}
	err = c.Upsert(ctxT(t), []json.RawMessage{json.RawMessage(`{"id":"ok"}`), json.RawMessage(`{"id":"g1","_geo":"nowhere"}`)})
	if !errors.As(err, &te) || te.Status != "failed" || !errors.Is(err, ErrInvalidDocument) {
		t.Fatalf("error = %v, want a failed *TaskError wrapping ErrInvalidDocument", err)
	}
	if n := count(t, c); n != 0 {
		t.Errorf("count = %d, want 0 (a failed task writes nothing)", n)
	}

	// Delete by filter on a non-filterable attribute fails as a task, not as an HTTP error.
	err = c.DeleteByFilter(ctxT(t), "type = x")
	if !errors.As(err, &te) || te.Code != "invalid_document_filter" || !errors.Is(err, ErrInvalidFilter) {
		t.Errorf("delete by filter on a non-filterable attribute: error = %v, want a failed task wrapping ErrInvalidFilter", err)
	}
}

func TestMeiliOutageIsUnavailable(t *testing.T) {
	t.Parallel()
	srv := meilitest.Start(t)
	ix := meiliOpener(srv)(t)
	c := loadFixture(t, ix.Files())

	srv.Stop()
	checks := map[string]func(ctx context.Context) error{
		"search": func(ctx context.Context) error { _, err := c.Search(ctx, Query{Q: "zebra"}); return err },
		"upsert": func(ctx context.Context) error {
			return c.Upsert(ctx, []json.RawMessage{json.RawMessage(`{"id":"new"}`)})
		},
		"delete":    func(ctx context.Context) error { return c.Delete(ctx, []string{"d1"}) },
		"count":     func(ctx context.Context) error { _, err := c.Count(ctx); return err },
		"ids":       func(ctx context.Context) error { return c.IDs(ctx, func(string) error { return nil }) },
		"configure": func(ctx context.Context) error { return c.Configure(ctx, fixtureSettings) },
	}
	for name, f := range checks {
		err := f(ctxT(t))
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s while stopped: error = %v, want ErrUnavailable", name, err)
		}
		if err != nil && strings.Contains(err.Error(), srv.MasterKey) {
			t.Errorf("%s: error %q contains the API key", name, err)
		}
	}
	_, err := OpenMeilisearch(ctxT(t), MeiliConfig{Host: srv.URL, APIKey: srv.MasterKey})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("open while stopped: error = %v, want ErrUnavailable", err)
	}

	srv.Restart()
	if got := idSet(search(t, c, Query{Q: "zebra"})); got != "d1 d4" {
		t.Errorf("after restart: got [%s], want [d1 d4]", got)
	}
	upsert(t, c, `{"id":"new","read":{"text":"zebra"}}`)
	if n := count(t, c); n != int64(len(fixtureDocs))+1 {
		t.Errorf("count after restart = %d, want %d", n, len(fixtureDocs)+1)
	}
}

func TestMeiliCancelledContextIsNotUnavailable(t *testing.T) {
	t.Parallel()
	c := meiliOpener(meilitest.Start(t))(t).Files()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := c.Search(ctx, Query{})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Errorf("error = %v, want context.Canceled and not ErrUnavailable", err)
	}
}

func TestMeiliWrongKeyNeverShowsKeys(t *testing.T) {
	t.Parallel()
	srv := meilitest.Start(t)
	const wrong = "wrong-key-0123456789abcdef"
	_, err := OpenMeilisearch(ctxT(t), MeiliConfig{Host: srv.URL, APIKey: wrong})
	if err == nil {
		t.Fatal("open with a wrong key succeeded")
	}
	if errors.Is(err, ErrUnavailable) {
		t.Errorf("wrong key reported as ErrUnavailable: %v", err)
	}
	for _, k := range []string{wrong, srv.MasterKey} {
		if strings.Contains(err.Error(), k) {
			t.Errorf("error %q contains an API key", err)
		}
	}
}
