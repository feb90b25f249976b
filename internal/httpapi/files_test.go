package httpapi

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveFiles syncs tree (relative path -> content) into a fresh daemon's INDEX_DIRECTORY and
// serves /files for it on a server of its own, with opts. It returns the daemon and the
// server's base URL.
func serveFiles(t *testing.T, tree map[string]string, opts ...Option) (*daemon, string) {
	t.Helper()
	d := startDaemon(t, nil)
	syncTree(t, d, tree)
	cfg := d.app.Config
	lib := WithFiles(Library{Docs: d.app.Catalog, IndexDir: cfg.IndexDirectory, ArchiveRel: cfg.ArchiveRel,
		MetadataDir: cfg.MetadataDirectory})
	srv, err := New("127.0.0.1:0", nil, append([]Option{lib}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return d, "http://" + srv.Addr()
}

// syncTree writes tree under INDEX_DIRECTORY and runs one sync.
func syncTree(t *testing.T, d *daemon, tree map[string]string) {
	t.Helper()
	for rel, body := range tree {
		p := filepath.Join(d.app.Config.IndexDirectory, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.app.SyncOnce(context.Background(), "test"); err != nil {
		t.Fatal(err)
	}
}

// docID returns the id the catalog gave rel.
func docID(t *testing.T, d *daemon, rel string) string {
	t.Helper()
	id, ok, err := d.app.Catalog.FileDoc(context.Background(), rel)
	if err != nil || !ok {
		t.Fatalf("%s: no document (%v)", rel, err)
	}
	return id
}

func TestFilesStreamsWithRangesAndSafeHeaders(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("0123456789", 1000)
	d, base := serveFiles(t, map[string]string{
		"docs/notes.txt":   body,
		"web/page.html":    "<html><script>alert(1)</script></html>",
		"pics/a\"b\n.png":  "\x89PNG\r\n\x1a\n" + strings.Repeat("x", 64),
		"caf\xe9/menu.txt": "bytes in the name",
	})

	id := docID(t, d, "docs/notes.txt")
	resp, got := send(t, "GET", base+"/files/"+id, "")
	if resp.StatusCode != 200 || got != body {
		t.Fatalf("GET: %d, %d bytes", resp.StatusCode, len(got))
	}
	h := resp.Header
	if h.Get("Content-Type") != "text/plain; charset=utf-8" || h.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.HasPrefix(h.Get("Content-Disposition"), "inline") || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox") ||
		h.Get("ETag") != `"`+id+`"` || h.Get("Accept-Ranges") != "bytes" {
		t.Fatalf("headers: %v", h)
	}

	resp, got = send(t, "GET", base+"/files/"+id, "", "Range", "bytes=10-19")
	if resp.StatusCode != http.StatusPartialContent || got != "0123456789" || resp.Header.Get("Content-Range") != "bytes 10-19/10000" {
		t.Fatalf("range: %d %q %q", resp.StatusCode, got, resp.Header.Get("Content-Range"))
	}
	resp, _ = send(t, "GET", base+"/files/"+id, "", "If-None-Match", `"`+id+`"`)
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("conditional: %d", resp.StatusCode)
	}

	// HTML never renders from this origin: downloaded, as bytes.
	resp, _ = send(t, "GET", base+"/files/"+docID(t, d, "web/page.html"), "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/octet-stream" ||
		!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("html: %d %v", resp.StatusCode, resp.Header)
	}

	// A hostile name cannot break the header; a name that is not UTF-8 is served from its bytes.
	resp, _ = send(t, "GET", base+"/files/"+docID(t, d, "pics/a\"b\n.png"), "")
	cd := resp.Header.Get("Content-Disposition")
	if resp.StatusCode != 200 || strings.ContainsAny(cd, "\n\r") || !strings.Contains(cd, "filename") {
		t.Fatalf("hostile name: %d %q", resp.StatusCode, cd)
	}
	resp, got = send(t, "GET", base+"/files/"+docID(t, d, "caf\xe9/menu.txt"), "")
	if resp.StatusCode != 200 || got != "bytes in the name" {
		t.Fatalf("latin-1 directory: %d %q", resp.StatusCode, got)
	}
}

func TestFilesRefusesUnknownIDsAndEscapes(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, base := serveFiles(t, map[string]string{"a.txt": "secret"})
	id := docID(t, d, "a.txt")

	for _, path := range []string{
		"/files/0000000000000000", "/files/not-an-id", "/files/..%2f..%2fetc%2fpasswd", "/files/" + id + "/..%2f..",
		"/files/" + id + "/thumbnail", "/files/" + id + "/other",
	} {
		if resp, body := send(t, "GET", base+path, ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d %s, want 404", path, resp.StatusCode, body)
		}
	}

	// The catalog's path now leads outside INDEX_DIRECTORY through a symlink: os.Root refuses
	// it, so the file is not served even though the content (and so the id) is the same.
	p := filepath.Join(d.app.Config.IndexDirectory, "a.txt")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
	if resp, body := send(t, "GET", base+"/files/"+id, ""); resp.StatusCode != http.StatusNotFound || strings.Contains(body, "secret\"") {
		t.Fatalf("symlink escape: %d %s, want 404", resp.StatusCode, body)
	}
	// Gone altogether: no readable copy.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if resp, _ := send(t, "GET", base+"/files/"+id, ""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("after removal: %d, want 404", resp.StatusCode)
	}
}

func TestFilesOfflineDriveSaysWhichToPlugIn(t *testing.T) {
	t.Parallel()
	d, base := serveFiles(t, map[string]string{"archive/holiday-disk/beach.txt": "sand and sea"})
	id := docID(t, d, "archive/holiday-disk/beach.txt")
	if resp, got := send(t, "GET", base+"/files/"+id, ""); resp.StatusCode != 200 || got != "sand and sea" {
		t.Fatalf("online: %d %q", resp.StatusCode, got)
	}
	drive := filepath.Join(d.app.Config.ArchiveDirectory, "holiday-disk")
	if err := os.Rename(drive, filepath.Join(t.TempDir(), "unplugged")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.SyncOnce(context.Background(), "unplug"); err != nil {
		t.Fatal(err)
	}
	resp, body := send(t, "GET", base+"/files/"+id, "")
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "holiday-disk") {
		t.Fatalf("offline: %d %s, want 409 naming the drive", resp.StatusCode, body)
	}
}

func TestFilesThumbnailsAreCached(t *testing.T) {
	t.Parallel()
	d, base := serveFiles(t, map[string]string{"p.jpg": "\xff\xd8\xff\xe0 not really a jpeg"})
	id := docID(t, d, "p.jpg")
	dir := filepath.Join(d.app.Config.MetadataDirectory, "by-id", id, "thumbnail")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.jpg"), []byte("small picture"), 0o644); err != nil {
		t.Fatal(err)
	}
	resp, got := send(t, "GET", base+"/files/"+id+"/thumbnail", "")
	if resp.StatusCode != 200 || got != "small picture" || resp.Header.Get("Content-Type") != "image/jpeg" ||
		resp.Header.Get("Cache-Control") != "private, max-age=86400" {
		t.Fatalf("thumbnail: %d %q %v", resp.StatusCode, got, resp.Header)
	}
	resp, _ = send(t, "GET", base+"/files/"+id+"/thumbnail", "", "If-None-Match", resp.Header.Get("ETag"))
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("thumbnail revalidation: %d", resp.StatusCode)
	}
	if resp, _ := send(t, "GET", base+"/files/"+id+"/preview", ""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("missing preview: %d", resp.StatusCode)
	}
}
