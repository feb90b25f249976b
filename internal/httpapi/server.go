// Package httpapi serves the daemon's HTTP endpoints: /healthz (the process is alive),
// /readyz (its dependencies answer), and with WithOps /metrics, /api/status, /api/failed,
// /api/search and the POST actions (retry, pause, resume, requeue, failed/clear, sync), which are
// guarded against cross-site requests. Loopback by default; GET endpoints are read-only;
// /debug/pprof only with WithPprof. With WithOps, "/" is the status page (page.go).
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/ops"
)

// Check is one readiness probe (catalog, Redis, ...).
type Check struct {
	Name string
	Fn   func(ctx context.Context) error
}

// Server is the HTTP server.
type Server struct {
	srv    *http.Server
	ln     net.Listener
	checks []Check
}

// Option adds endpoints to a Server or sets how it authenticates.
type Option func(*serverSetup)

// serverSetup is what Options fill in before New builds the handler.
type serverSetup struct {
	mux  *http.ServeMux
	auth AuthMode
}

// WithOps serves /metrics and /api/* from svc, and the status page at / that shows them;
// files answers /api/search (nil: 503).
func WithOps(svc *ops.Service, files Searcher, log zerolog.Logger) Option {
	return func(s *serverSetup) {
		s.mux.Handle("GET /metrics", metricsHandler(NewRegistry(svc, log)))
		mountAPI(s.mux, svc, files)
		mountPage(s.mux)
	}
}

// WithPprof serves net/http/pprof under /debug/pprof/ (HTTP_PPROF=true).
func WithPprof() Option {
	return func(s *serverSetup) {
		mux := s.mux
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
}

// New listens on addr now (so a bad address fails at start) and builds the handlers.
func New(addr string, checks []Check, opts ...Option) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, checks: checks}
	mux := http.NewServeMux()
	setup := &serverSetup{mux: mux}
	for _, o := range opts {
		o(setup)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.ready)
	// Browsers ask for an icon on their own; an answer with no content keeps that request out
	// of the 404s (and a page's console errors).
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "max-age=86400")
		w.WriteHeader(http.StatusNoContent)
	})
	s.srv = &http.Server{Handler: authenticate(setup.auth, mux), ReadHeaderTimeout: 5 * time.Second}
	return s, nil
}

// Addr is the bound address (useful with port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves until Shutdown.
func (s *Server) Serve() error {
	if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops the server, waiting for requests in flight until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	out := map[string]string{}
	code := http.StatusOK
	for _, c := range s.checks {
		if err := c.Fn(ctx); err != nil {
			out[c.Name] = err.Error()
			code = http.StatusServiceUnavailable
			continue
		}
		out[c.Name] = "ok"
	}
	writeJSON(w, code, out)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
