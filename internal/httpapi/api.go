package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/homeindex/homeindex/internal/ops"
	"github.com/homeindex/homeindex/internal/search"
)

// Searcher runs a query on the files index.
type Searcher interface {
	Search(ctx context.Context, q search.Query) (search.Result, error)
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

func searchHandler(w http.ResponseWriter, r *http.Request, files Searcher) {
	if files == nil {
		writeError(w, http.StatusServiceUnavailable, "search is not available")
		return
	}
	v := r.URL.Query()
	limit, err := intParam(v, "limit", 20, 0, search.MaxLimit)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	offset, err := intParam(v, "offset", 0, 0, math.MaxInt32)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	q := search.Query{Q: v.Get("q"), Filter: v.Get("filter"), Limit: limit, Offset: offset}
	if s := v.Get("sort"); s != "" {
		q.Sort = strings.Split(s, ",")
	}
	ctx, cancel := context.WithTimeout(r.Context(), apiTimeout)
	defer cancel()
	res, err := files.Search(ctx, q)
	if err != nil {
		// Filter and sort mistakes are the common cause; the message says which.
		writeError(w, http.StatusBadRequest, "search: "+err.Error())
		return
	}
	hits := res.Hits
	if hits == nil {
		hits = []json.RawMessage{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"total": res.Total, "limit": limit, "offset": offset, "hits": hits})
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
