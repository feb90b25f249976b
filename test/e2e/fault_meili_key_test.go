package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// qsMeiliKeyActions are the Meilisearch actions homeindexd needs (README, Security): every
// call internal/search makes, on its two indexes only.
var qsMeiliKeyActions = []string{"search", "documents.add", "documents.get", "documents.delete",
	"indexes.create", "indexes.get", "indexes.update", "settings.get", "settings.update",
	"stats.get", "tasks.get"}

// qsMeili calls the Meilisearch API with a key and returns the status and body.
func qsMeili(t *testing.T, base, key, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// S10 (docs/invariants.md, fault catalogue): homeindexd runs against Meilisearch with a key scoped to the
// actions it needs on its two indexes (made with the master key through the keys API), never
// the master key: documents are indexed and searchable, the key cannot manage keys nor touch
// another index, and it appears in no log. Without a key the search command fails saying so.
func TestFaultMeiliScopedKey(t *testing.T) {
	t.Parallel()
	const mod = "example-module"
	s := newStack(t, []module{{Name: mod, UID: "e1"}}, withMeili(), withDaemonEnv("DISPATCH_WINDOW", "32"))
	status, body := qsMeili(t, s.Meili.URL, s.Meili.MasterKey, http.MethodPost, "/keys", map[string]any{
		"name": "homeindexd", "description": "homeindexd: its two indexes, nothing else",
		"actions": qsMeiliKeyActions, "indexes": []string{"files", "file_chunks"}, "expiresAt": nil,
	})
	if status != http.StatusCreated {
		t.Fatalf("create a scoped key: %d %s", status, body)
	}
	var created struct{ Key string }
	if err := json.Unmarshal(body, &created); err != nil || created.Key == "" {
		t.Fatalf("create a scoped key: %s (%v)", body, err)
	}
	key := created.Key
	s.Daemon.Env["MEILISEARCH_API_KEY"] = key

	n := qsSize(12, 200)
	var ids []string
	for i := range n {
		rel := fmt.Sprintf("m%02d/file%04d.txt", i%5, i)
		if i%4 == 0 {
			rel = fmt.Sprintf("archive/usb/file%04d.txt", i)
		}
		ids = append(ids, s.write(rel, fmt.Sprintf("meili key file %d", i)))
	}
	started := time.Now()
	s.Daemon.Start()
	s.startModule("worker1", bin.example, mod)
	waitUntil(t, time.Duration(60+n/4)*time.Second, "every file enriched", s.docsDone(ids, noted))
	t.Logf("meili key: %d files enriched in %v", n, time.Since(started).Round(time.Millisecond))
	waitUntil(t, 60*time.Second, "every document indexed with its module fields, searched through the scoped key", func() error {
		hits, err := s.searchCLI("", "hello") // the module's note and content
		if err != nil {
			return err
		}
		if len(hits) != n {
			return fmt.Errorf("%d hits, want %d", len(hits), n)
		}
		return nil
	})
	t.Logf("meili key: %d files searchable in %v", n, time.Since(started).Round(time.Millisecond))

	// The key is scoped: no key management, no other index, no instance-wide actions.
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/keys"},
		{http.MethodPost, "/indexes"},
		{http.MethodGet, "/indexes/other/documents"},
		{http.MethodPost, "/dumps"},
	} {
		var b any
		if c.method == http.MethodPost {
			b = map[string]any{"uid": "other"}
		}
		if st, body := qsMeili(t, s.Meili.URL, key, c.method, c.path, b); st != http.StatusForbidden {
			t.Errorf("scoped key: %s %s: %d %s, want 403", c.method, c.path, st, body)
		}
	}

	// Without a key the search command says what is wrong.
	s.Daemon.Env["MEILISEARCH_API_KEY"] = ""
	_, stderr, code := s.cli("search", "hello")
	s.Daemon.Env["MEILISEARCH_API_KEY"] = key
	if code == 0 || !strings.Contains(strings.ToLower(stderr), "authorization") {
		t.Errorf("search without a key: exit %d, stderr %q; want a failure naming the missing authorization", code, stderr)
	}
	qsNoSecretInLogs(t, s, key, s.Meili.MasterKey)
}
