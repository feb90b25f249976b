package search

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/meilisearch/meilisearch-go"
)

// MeiliConfig configures the Meilisearch backend.
type MeiliConfig struct {
	// Host is the server's base URL, e.g. http://127.0.0.1:7700. Required.
	Host string
	// APIKey is sent as a bearer token; it never appears in errors.
	APIKey string
	// FilesIndex and ChunksIndex are the index uids; "" means "files" and "file_chunks".
	FilesIndex, ChunksIndex string
	// Timeout bounds each HTTP request (0 means DefaultMeiliTimeout). Waiting for a write
	// task to finish is bounded by meiliTaskWaitFactor × Timeout.
	Timeout time.Duration
}

const (
	// DefaultMeiliTimeout is MeiliConfig.Timeout's default.
	DefaultMeiliTimeout = 10 * time.Second
	// meiliTaskWaitFactor × Timeout bounds the wait for one task (5 minutes by default).
	meiliTaskWaitFactor = 30
	// meiliBatchDocs and meiliBatchBytes bound one AddDocuments payload (the server's own
	// limit is 100 MB; a few MB keeps requests short and memory flat).
	meiliBatchDocs  = 5000
	meiliBatchBytes = 8 << 20
	// meiliMaxValuesPerFacet is the index setting faceting.maxValuesPerFacet: facet counts
	// list every value (the chunks index's file_id facet lists every matching file).
	meiliMaxValuesPerFacet = 1 << 30
)

// meiliRankingRules puts "sort" first, so an explicit sort orders the hits on both backends
// (Meilisearch's default applies it only after words, typo, proximity and attribute).
var meiliRankingRules = []string{"sort", "words", "typo", "proximity", "attribute", "exactness"}

type meiliIndex struct {
	client meilisearch.ServiceManager
	hc     *http.Client // for multi-search, sent as is (see multiSearch)
	cfg    MeiliConfig
	files  *meiliCollection
	chunks *meiliCollection
}

// OpenMeilisearch connects to a Meilisearch server and makes sure both indexes exist with
// primary key "id". An unreachable server gives an error wrapping ErrUnavailable.
func OpenMeilisearch(ctx context.Context, c MeiliConfig) (Index, error) {
	c.FilesIndex = cmp.Or(c.FilesIndex, "files")
	c.ChunksIndex = cmp.Or(c.ChunksIndex, "file_chunks")
	c.Timeout = cmp.Or(c.Timeout, DefaultMeiliTimeout)
	u, err := url.Parse(c.Host)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("open meilisearch: host %q: want an http(s) URL", redact(c.Host, c.APIKey))
	}
	if c.FilesIndex == c.ChunksIndex {
		return nil, fmt.Errorf("open meilisearch: files and chunks use the same index %q", c.FilesIndex)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DialContext = (&net.Dialer{Timeout: min(c.Timeout, 5*time.Second), KeepAlive: 30 * time.Second}).DialContext
	transport.MaxIdleConnsPerHost = 8
	transport.ResponseHeaderTimeout = c.Timeout
	hc := &http.Client{Timeout: c.Timeout, Transport: transport}
	ix := &meiliIndex{
		client: meilisearch.New(c.Host,
			meilisearch.WithAPIKey(c.APIKey),
			meilisearch.WithCustomClient(hc),
			// Retrying is the caller's job (ErrUnavailable): the client's own retries
			// would only stretch an outage by seconds per call.
			meilisearch.DisableRetries()),
		cfg: c,
		hc:  hc,
	}
	ix.files = &meiliCollection{ix: ix, uid: c.FilesIndex}
	ix.chunks = &meiliCollection{ix: ix, uid: c.ChunksIndex}
	for _, coll := range []*meiliCollection{ix.files, ix.chunks} {
		if err := coll.ensureIndex(ctx); err != nil {
			ix.client.Close()
			return nil, fmt.Errorf("open meilisearch: %w", err)
		}
	}
	return ix, nil
}

func (ix *meiliIndex) Files() Collection  { return ix.files }
func (ix *meiliIndex) Chunks() Collection { return ix.chunks }
func (ix *meiliIndex) Name() string       { return "meilisearch" }

// Close releases idle connections.
func (ix *meiliIndex) Close() error {
	ix.client.Close()
	return nil
}

// requestCtx bounds one HTTP request.
func (ix *meiliIndex) requestCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, ix.cfg.Timeout)
}

// waitTask polls a task until it is finished, backing off from 5 ms to 200 ms, and returns
// a *TaskError unless it succeeded.
func (ix *meiliIndex) waitTask(ctx context.Context, op string, info *meilisearch.TaskInfo) error {
	ctx, cancel := context.WithTimeout(ctx, meiliTaskWaitFactor*ix.cfg.Timeout)
	defer cancel()
	delay := 5 * time.Millisecond
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ix.classify(op+": wait for task", fmt.Errorf("task %d: %w", info.TaskUID, ctx.Err()))
		case <-timer.C:
		}
		rctx, rcancel := ix.requestCtx(ctx)
		task, err := ix.client.GetTaskWithContext(rctx, info.TaskUID)
		rcancel()
		if err != nil {
			return ix.classify(op+": wait for task", err)
		}
		switch task.Status {
		case meilisearch.TaskStatusSucceeded:
			return nil
		case meilisearch.TaskStatusFailed, meilisearch.TaskStatusCanceled:
			return fmt.Errorf("%s: %w", op, &TaskError{
				TaskUID: task.UID, Type: string(task.Type), Status: string(task.Status),
				Code: task.Error.Code, Message: redact(task.Error.Message, ix.cfg.APIKey),
			})
		}
		delay = min(2*delay, 200*time.Millisecond)
		timer.Reset(delay)
	}
}

// TaskError is a Meilisearch task that finished without succeeding (WaitForTask reports
// those without an error). It wraps ErrInvalidFilter or ErrInvalidDocument when its code
// says so.
type TaskError struct {
	TaskUID       int64
	Type, Status  string
	Code, Message string
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("meilisearch task %d (%s) %s: %s: %s", e.TaskUID, e.Type, e.Status, e.Code, e.Message)
}

// Unwrap maps the task's error code to this package's sentinels.
func (e *TaskError) Unwrap() error { return codeSentinel(e.Code) }

// codeSentinel maps a Meilisearch error code to ErrInvalidFilter, ErrInvalidDocument or nil.
func codeSentinel(code string) error {
	switch code {
	case "invalid_search_filter", "invalid_search_sort", "invalid_document_filter",
		"invalid_document_sort", "invalid_document_fetch_filter":
		return ErrInvalidFilter
	case "invalid_document_id", "missing_document_id", "invalid_document_fields",
		"bad_request_document", "malformed_payload", "missing_payload", "payload_too_large",
		"invalid_document_geo_field", "index_primary_key_multiple_candidates_found",
		"index_primary_key_no_candidate_found":
		return ErrInvalidDocument
	}
	return nil
}

// meiliError is an error from the Meilisearch client with a message that never contains
// the API key. It unwraps to its sentinel (if any) and to the client's error.
type meiliError struct {
	msg    string
	causes []error // sentinel (if any), the client's error, its origin (if any)
}

func (e *meiliError) Error() string   { return e.msg }
func (e *meiliError) Unwrap() []error { return e.causes }

// redact removes the API key from a message.
func redact(msg, key string) string {
	if key == "" {
		return msg
	}
	return strings.ReplaceAll(msg, key, "[redacted]")
}

// classify wraps a client error: unreachable, timed out or 5xx is ErrUnavailable; a known
// 4xx code maps through codeSentinel; a cancelled caller context stays context.Canceled.
func (ix *meiliIndex) classify(op string, err error) error {
	var me *meilisearch.Error
	var sentinel error
	detail := err.Error()
	causes := []error{err}
	switch {
	case errors.As(err, &me):
		if me.OriginError != nil {
			// *meilisearch.Error does not unwrap; expose its origin (context.Canceled…).
			causes = append(causes, me.OriginError)
		}
		switch {
		case me.ErrCode == meilisearch.MeilisearchCommunicationError,
			me.ErrCode == meilisearch.MeilisearchTimeoutError,
			me.ErrCode == meilisearch.MeilisearchMaxRetriesExceeded:
			if !errors.Is(me.OriginError, context.Canceled) {
				sentinel = ErrUnavailable
			}
			detail = fmt.Sprintf("%s %s: %v", me.Method, me.Endpoint, me.OriginError)
		case me.StatusCode >= 500:
			sentinel = ErrUnavailable
			detail = fmt.Sprintf("%s %s: HTTP %d %s: %s", me.Method, me.Endpoint, me.StatusCode,
				me.MeilisearchApiError.Code, me.MeilisearchApiError.Message)
		case me.StatusCode > 0:
			sentinel = codeSentinel(me.MeilisearchApiError.Code)
			detail = fmt.Sprintf("%s %s: HTTP %d %s: %s", me.Method, me.Endpoint, me.StatusCode,
				me.MeilisearchApiError.Code, me.MeilisearchApiError.Message)
		}
	case errors.Is(err, context.DeadlineExceeded):
		sentinel = ErrUnavailable
	}
	msg := op + ": " + detail
	if sentinel != nil {
		msg = op + ": " + sentinel.Error() + ": " + detail
		causes = append([]error{sentinel}, causes...)
	}
	return &meiliError{msg: redact(msg, ix.cfg.APIKey), causes: causes}
}

// multiSearch sends queries in one POST /multi-search and decodes the results into out (one
// per query). The request is built here rather than through the client, whose types cannot
// say hitsPerPage 0 (a count without hits) and re-encode every hit.
func (ix *meiliIndex) multiSearch(ctx context.Context, queries []map[string]any, out []meiliSearchResponse) error {
	body, err := json.Marshal(map[string]any{"queries": queries})
	if err != nil {
		return err
	}
	rctx, cancel := ix.requestCtx(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, strings.TrimSuffix(ix.cfg.Host, "/")+"/multi-search", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if ix.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+ix.cfg.APIKey)
	}
	resp, err := ix.hc.Do(req)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("%w: POST /multi-search: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%w: POST /multi-search: %w", ErrUnavailable, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Code, Message string }
		_ = json.Unmarshal(raw, &e)
		err := fmt.Errorf("POST /multi-search: HTTP %d %s: %s", resp.StatusCode, e.Code, e.Message)
		switch s := codeSentinel(e.Code); {
		case resp.StatusCode >= 500:
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		case s != nil:
			return fmt.Errorf("%w: %w", s, err)
		}
		return err
	}
	var res struct {
		Results []meiliSearchResponse `json:"results"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("POST /multi-search: decode: %w", err)
	}
	if len(res.Results) != len(out) {
		return fmt.Errorf("POST /multi-search: %d results for %d queries", len(res.Results), len(out))
	}
	copy(out, res.Results)
	return nil
}
