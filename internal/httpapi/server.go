// Package httpapi serves the daemon's HTTP endpoints: /healthz (the process is alive) and
// /readyz (its dependencies answer). Loopback by default; every endpoint is read-only.
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"
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

// New listens on addr now (so a bad address fails at start) and builds the handlers.
func New(addr string, checks []Check) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, checks: checks}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.ready)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
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
