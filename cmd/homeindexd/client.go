package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// clientTimeout bounds one request to the running daemon.
const clientTimeout = 60 * time.Second

// daemonClient talks to the running daemon's HTTP API on HTTP_ADDR.
type daemonClient struct {
	base  string
	token string // HTTP_TOKEN, sent as a Bearer token
	http  *http.Client
}

// newDaemonClient reads HTTP_ADDR (with the rest of the configuration, so a bad value is
// reported like everywhere else).
func newDaemonClient(e env) (*daemonClient, error) {
	cfg, _, err := loadConfig(e)
	if err != nil {
		return nil, err
	}
	if cfg.HTTPAddr == "" {
		return nil, errors.New("HTTP_ADDR is off: the daemon serves no API to talk to")
	}
	return &daemonClient{base: "http://" + probeAddr(cfg.HTTPAddr), token: cfg.HTTPToken, http: &http.Client{Timeout: clientTimeout}}, nil
}

// get fetches path into out.
func (c *daemonClient) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	return c.do(req, out)
}

// post sends in as JSON to path and reads the answer into out.
func (c *daemonClient) post(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return c.do(req, out)
}

func (c *daemonClient) do(req *http.Request, out any) error {
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the daemon at %s (HTTP_ADDR): %w; is `homeindexd run` running?", c.base, unwrapURL(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("read the daemon's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return errors.New(e.Error)
		}
		return fmt.Errorf("%s %s: %s", req.Method, req.URL.Path, resp.Status)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("the daemon's answer: %w", err)
	}
	return nil
}

// unwrapURL drops the method and URL a *url.Error repeats.
func unwrapURL(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// printJSON writes v indented.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
