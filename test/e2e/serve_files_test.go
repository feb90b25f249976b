package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// With HTTP_TOKEN set, the daemon's page, API and files need the token; the CLI passes it;
// a file opens by id with Range; and the token never shows in the daemon's log. A
// non-loopback HTTP_ADDR without a token refuses to start (exit 2) and binds nothing.
func TestFilesOpenWithTokenAndCLIPassesIt(t *testing.T) {
	t.Parallel()
	const token = "e2e-token-0123456789abcdef"
	s := newStack(t, nil, withDaemonEnv("HTTP_TOKEN", token))
	body := strings.Repeat("a line of a song\n", 200)
	s.write("music/lyrics.txt", body)
	id := docID(body)
	s.Daemon.Start()

	get := func(path string, header ...string) (int, string) {
		req, err := http.NewRequest("GET", "http://"+s.HTTPAddr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitUntil(t, 30*time.Second, "the file is served", func() error {
		if code, got := get("/files/"+id, "Authorization", "Bearer "+token); code != 200 || got != body {
			return fmt.Errorf("GET /files/%s: %d", id, code)
		}
		return nil
	})
	if code, _ := get("/files/"+id+"", "Range", "bytes=0-3"); code != http.StatusUnauthorized {
		t.Fatalf("without the token: %d, want 401", code)
	}
	if code, _ := get("/api/status", "Authorization", "Bearer wrong-token-0123456789"); code != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d, want 401", code)
	}
	if code, got := get("/files/"+id, "Authorization", "Bearer "+token, "Range", "bytes=2-5"); code != http.StatusPartialContent || got != "line" {
		t.Fatalf("range: %d %q", code, got)
	}
	if out, errOut, code := s.cli("status", "--json"); code != 0 || !strings.Contains(out, "documents") {
		t.Fatalf("status through the CLI with HTTP_TOKEN: exit %d: %s %s", code, out, errOut)
	}
	if _, _, code := s.cli("healthcheck"); code != 0 {
		t.Fatalf("healthcheck with HTTP_TOKEN: exit %d", code)
	}
	s.Daemon.Stop()
	if strings.Contains(s.Daemon.Log(), token) {
		t.Fatal("the daemon's log contains the token")
	}

	// Every interface and no token: refused before anything binds or is created.
	state := t.TempDir()
	cmd := exec.Command(bin.homeindexd, "run")
	cmd.Env = append(os.Environ(), "INDEX_DIRECTORY="+s.Files, "STATE_DIRECTORY="+state+"/new",
		"METADATA_DIRECTORY="+state+"/meta", "HTTP_ADDR=0.0.0.0:0")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "HTTP_TOKEN") {
		t.Fatalf("open address without a token: %v: %s", err, out)
	}
	if _, err := os.Stat(state + "/new"); !os.IsNotExist(err) {
		t.Fatalf("a refused start created the state directory: %v", err)
	}
}
