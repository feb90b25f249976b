package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// cmdHealthcheck probes the running daemon's /readyz on HTTP_ADDR (the compose and Dockerfile
// healthcheck): exit 0 when ready, 1 otherwise.
func cmdHealthcheck(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "healthcheck", "healthcheck [--live]\n\nProbes the running daemon on HTTP_ADDR: /readyz (catalog and Redis reachable), or /healthz with --live.\nExit 0 when healthy, 1 otherwise.")
	live := fs.Bool("live", false, "probe /healthz (the process answers) instead of /readyz")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, _, err := loadConfig(e)
	if err != nil {
		return err
	}
	if cfg.HTTPAddr == "" {
		return fmt.Errorf("healthcheck: HTTP_ADDR is off")
	}
	path := "/readyz"
	if *live {
		path = "/healthz"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+probeAddr(cfg.HTTPAddr)+path, nil)
	if err != nil {
		return err
	}
	if cfg.HTTPToken != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.HTTPToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s: %s", resp.Status, body)
	}
	fmt.Fprintf(e.stdout, "%s", body)
	return nil
}

// probeAddr turns a listen address into one to dial: a wildcard host means this machine.
func probeAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
