package httpapi

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/app"
	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/internal/ops"
	"github.com/homeindex/homeindex/internal/pipeline"
	"github.com/homeindex/homeindex/internal/search"
)

// daemon is the parts `homeindexd run` wires for HTTP: app, pipeline (with modules), ops and
// the server on a loopback port.
type daemon struct {
	app  *app.App
	pipe *pipeline.Pipeline
	svc  *ops.Service
	srv  *Server
	base string
}

// startDaemon opens an app over temp directories with vars (MODULES, REDIS_HOST, ...), runs
// its pipeline when it has modules, and serves HTTP with opts (WithOps is added first).
func startDaemon(t *testing.T, vars map[string]string, opts ...Option) *daemon {
	t.Helper()
	root := t.TempDir()
	env := map[string]string{
		"INDEX_DIRECTORY":    filepath.Join(root, "files"),
		"METADATA_DIRECTORY": filepath.Join(root, "metadata"),
		"STATE_DIRECTORY":    filepath.Join(root, "state"),
		"LOG_FORMAT":         "json",
		"REAP_INTERVAL":      "100ms",
		"SETTLE_TIME":        "0",
	}
	for k, v := range vars {
		env[k] = v
	}
	if err := os.MkdirAll(env["INDEX_DIRECTORY"], 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel)
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon{app: a, pipe: a.NewPipeline(nil)}
	opsCfg := ops.Config{Version: "test", Daemon: cfg, Catalog: a.Catalog, Files: a, Outbox: a.Outbox}
	if d.pipe != nil {
		if err := d.pipe.Pauses().Load(ctx); err != nil {
			t.Fatal(err)
		}
		opsCfg.Pipeline = d.pipe
	}
	d.svc = ops.New(opsCfg, log)
	d.srv, err = New("127.0.0.1:0", nil, append([]Option{WithOps(d.svc, search.IndexSearcher{Index: a.Index, Drives: a.Catalog.Drives}, log)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	d.base = "http://" + d.srv.Addr()
	done := make(chan struct{})
	go func() {
		defer close(done)
		go func() { _ = d.srv.Serve() }()
		if d.pipe != nil {
			_ = d.pipe.Run(ctx)
		}
		<-ctx.Done()
	}()
	t.Cleanup(func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = d.srv.Shutdown(sctx)
		scancel()
		<-done
		_ = a.Close()
	})
	if d.pipe != nil {
		select {
		case <-d.pipe.Ready():
		case <-time.After(30 * time.Second):
			t.Fatal("pipeline not ready after 30 s")
		}
	}
	return d
}

// do sends a request and returns the status code and body.
func (d *daemon) do(t *testing.T, method, path, body string, header ...string) (int, string) {
	t.Helper()
	resp, b := send(t, method, d.base+path, body, header...)
	return resp.StatusCode, b
}

// send sends a request with header pairs and returns the response and its body.
func send(t *testing.T, method, url, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1] // the client sends req.Host, not a Host header
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}
