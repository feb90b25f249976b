package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/homeindex/homeindex/internal/ops"
	"github.com/homeindex/homeindex/internal/search"
)

// Searcher runs searches over files and their module content (search.IndexSearcher).
type Searcher interface {
	SearchFiles(ctx context.Context, q search.FileQuery) (search.FileResult, error)
	// FacetAttributes are the facets "facets=all" counts.
	FacetAttributes() []string
}

// maxBody bounds a POST body: the requests are a few small fields.
const maxBody = 64 << 10

// apiTimeout bounds one API request's work.
const apiTimeout = 30 * time.Second

// mountAPI registers /api/*: GETs read, POSTs act (guarded against cross-site requests).
func mountAPI(mux *http.ServeMux, svc *ops.Service, files Searcher) {
	mux.HandleFunc("GET /api/status", func(w http.ResponseWriter, r *http.Request) {
		st, err := svc.Status(r.Context())
		reply(w, st, err)
	})
	mux.HandleFunc("GET /api/failed", func(w http.ResponseWriter, r *http.Request) {
		limit, err := intParam(r.URL.Query(), "limit", 100, 0, 100000)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		list, err := svc.Failed(r.Context(), r.URL.Query().Get("module"), limit)
		reply(w, list, err)
	})
	mountSync(mux, svc)
	mux.HandleFunc("GET /api/search", func(w http.ResponseWriter, r *http.Request) { searchHandler(w, r, files) })
	post := func(path string, fn func(ctx context.Context, body []byte) (any, error)) {
		mux.Handle("POST "+path, guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
			if err != nil {
				writeError(w, http.StatusRequestEntityTooLarge, "request body too large")
				return
			}
			ctx, cancel := context.WithTimeout(r.Context(), apiTimeout)
			defer cancel()
			v, err := fn(ctx, body)
			reply(w, v, err)
		})))
	}
	post("/api/retry", func(ctx context.Context, b []byte) (any, error) {
		var req ops.RetryRequest
		if err := decode(b, &req); err != nil {
			return nil, err
		}
		return svc.Retry(ctx, req)
	})
	post("/api/pause", func(ctx context.Context, b []byte) (any, error) {
		var req struct{ Module string }
		if err := decode(b, &req); err != nil {
			return nil, err
		}
		return svc.Pause(ctx, req.Module)
	})
	post("/api/resume", func(ctx context.Context, b []byte) (any, error) {
		var req struct{ Module string }
		if err := decode(b, &req); err != nil {
			return nil, err
		}
		return svc.Resume(ctx, req.Module)
	})
	post("/api/requeue", func(ctx context.Context, b []byte) (any, error) {
		var req ops.RequeueRequest
		if err := decode(b, &req); err != nil {
			return nil, err
		}
		return svc.Requeue(ctx, req)
	})
	post("/api/missing/confirm", func(ctx context.Context, b []byte) (any, error) {
		if err := decode(b, &struct{}{}); err != nil {
			return nil, err
		}
		return svc.ConfirmMissing(ctx)
	})
	post("/api/failed/clear", func(ctx context.Context, b []byte) (any, error) {
		var req struct{ Module string }
		if err := decode(b, &req); err != nil {
			return nil, err
		}
		return svc.ClearFailed(ctx, req.Module)
	})
}

// decode reads a JSON object strictly: unknown fields are errors. An empty body is {}.
func decode(b []byte, v any) error {
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &ops.Error{Kind: ops.KindBadRequest, Msg: "request body: " + err.Error()}
	}
	return nil
}

// guard refuses cross-site requests to the POST endpoints: a browser page from another origin
// can only send application/json after a CORS preflight this server never grants, and its
// Origin (or Sec-Fetch-Site) gives it away. The CLI sends JSON and no Origin.
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || ct != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, "POST endpoints take Content-Type: application/json")
			return
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
			writeError(w, http.StatusForbidden, "cross-site request refused")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
				writeError(w, http.StatusForbidden, "cross-origin request refused")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// searchAttrs are the attributes with a parameter of their own: kind=image&kind=video keeps
// files of either kind. Any other filterable attribute takes f.<attribute>=value.
var searchAttrs = []string{search.FieldKind, search.FieldExtension, search.FieldDrive, search.FieldYear, search.FieldCamera, "offline", "type"}

func searchHandler(w http.ResponseWriter, r *http.Request, files Searcher) {
	if files == nil {
		writeError(w, http.StatusServiceUnavailable, "search is not available")
		return
	}
	q, err := parseSearch(r.URL.Query(), files)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), apiTimeout)
	defer cancel()
	res, err := files.SearchFiles(ctx, q)
	if err != nil {
		code := http.StatusBadRequest // filter, sort and facet mistakes; the message says which
		if errors.Is(err, search.ErrUnavailable) {
			code = http.StatusServiceUnavailable
		} else if errors.Is(err, context.DeadlineExceeded) {
			code = http.StatusGatewayTimeout
		}
		writeError(w, code, "search: "+err.Error())
		return
	}
	hits := make([]json.RawMessage, len(res.Hits))
	for i, h := range res.Hits {
		hits[i] = withSnippets(h)
	}
	limit := q.Limit
	writeJSON(w, http.StatusOK, map[string]any{
		"total": res.Total, "limit": limit, "offset": q.Offset, "page": q.Offset/limit + 1,
		"pages": (res.Total + int64(limit) - 1) / int64(limit), "sort": cmp.Or(q.Sort, "relevance"),
		"hits": hits, "facets": res.Facets,
	})
}

// withSnippets is a hit's document with its snippets under "_snippets".
func withSnippets(h search.FileHit) json.RawMessage {
	var d map[string]json.RawMessage
	if json.Unmarshal(h.Doc, &d) != nil {
		return h.Doc
	}
	s, err := json.Marshal(h.Snippets)
	if err != nil {
		return h.Doc
	}
	d["_snippets"] = s
	out, err := json.Marshal(d)
	if err != nil {
		return h.Doc
	}
	return out
}

// parseSearch reads /api/search's parameters.
func parseSearch(v url.Values, files Searcher) (search.FileQuery, error) {
	q := search.FileQuery{Q: v.Get("q"), Sort: v.Get("sort"), Filters: v["filter"]}
	var err error
	if q.Limit, err = intParam(v, "limit", search.DefaultLimit, 1, search.MaxLimit); err != nil {
		return q, err
	}
	if q.Offset, err = intParam(v, "offset", 0, 0, math.MaxInt32); err != nil {
		return q, err
	}
	if v.Has("page") {
		page, err := intParam(v, "page", 1, 1, math.MaxInt32/search.MaxLimit)
		if err != nil {
			return q, err
		}
		q.Offset = (page - 1) * q.Limit
	}
	if q.Snippets, err = intParam(v, "snippets", search.MaxSnippets, 0, search.MaxSnippets); err != nil {
		return q, err
	}
	switch f := v.Get("facets"); f {
	case "", "none":
	case "all", "true", "1":
		q.Facets = files.FacetAttributes()
	default:
		q.Facets = strings.Split(f, ",")
	}
	for name, vals := range v {
		attr, ok := strings.CutPrefix(name, "f.")
		if !ok && !slices.Contains(searchAttrs, name) {
			continue
		}
		if !ok {
			attr = name
		}
		var any []string
		for _, val := range vals {
			any = append(any, fmt.Sprintf("%s = %s", attr, quoteFilter(val)))
		}
		q.Filters = append(q.Filters, strings.Join(any, " OR "))
	}
	for _, rg := range []struct{ param, attr, op string }{
		{"date_from", search.FieldDate, ">="}, {"date_to", search.FieldDate, "<="},
		{"size_min", "size", ">="}, {"size_max", "size", "<="},
	} {
		s := v.Get(rg.param)
		if s == "" {
			continue
		}
		n, err := rangeValue(s, rg.param == "date_to")
		if err != nil {
			return q, fmt.Errorf("%s: %w", rg.param, err)
		}
		q.Filters = append(q.Filters, fmt.Sprintf("%s %s %d", rg.attr, rg.op, n))
	}
	slices.Sort(q.Filters) // map order above; equal requests give equal filters
	return q, nil
}

// rangeValue reads a number, or a date (YYYY-MM-DD, UTC) as Unix seconds: its first second,
// or with end its last one.
func rangeValue(s string, end bool) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return 0, errors.New("want a number or a date YYYY-MM-DD")
	}
	if end {
		return t.Unix() + 86399, nil
	}
	return t.Unix(), nil
}

// quoteFilter quotes a value for a filter expression.
func quoteFilter(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

func intParam(v url.Values, name string, def, lo, hi int) (int, error) {
	s := v.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s must be a number from %d to %d", name, lo, hi)
	}
	return n, nil
}

// reply writes v, or err with the status code its kind maps to.
func reply(w http.ResponseWriter, v any, err error) {
	if err == nil {
		writeJSON(w, http.StatusOK, v)
		return
	}
	code := http.StatusInternalServerError
	switch ops.KindOf(err) {
	case ops.KindBadRequest:
		code = http.StatusBadRequest
	case ops.KindNotFound:
		code = http.StatusNotFound
	case ops.KindConflict:
		code = http.StatusConflict
	case ops.KindUnavailable:
		code = http.StatusServiceUnavailable
	}
	if errors.Is(err, context.DeadlineExceeded) {
		code = http.StatusGatewayTimeout
	}
	writeError(w, code, err.Error())
}

// writeError writes {"error": msg}.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
