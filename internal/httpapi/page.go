package httpapi

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"time"
)

// web holds the search page (/) and the status page (/status): plain HTML, CSS and JavaScript, no build step, nothing loaded
// from elsewhere (it must work on a home server with no Internet).
//
//go:embed web
var web embed.FS

// pageCSP lets the page load only its own assets and call only its own API: no inline script
// or style, no framing, no form posted elsewhere.
const pageCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// asset is one embedded file, served with its type and a content hash as ETag.
type asset struct {
	name, ctype, etag string
	body              []byte
}

var assetTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// loadAssets reads every embedded file once; a file of a type it does not know is a build
// mistake, hence the panic.
func loadAssets() map[string]asset {
	entries, err := web.ReadDir("web")
	if err != nil {
		panic(err)
	}
	out := map[string]asset{}
	for _, e := range entries {
		b, err := web.ReadFile("web/" + e.Name())
		if err != nil {
			panic(err)
		}
		ct, ok := assetTypes[path.Ext(e.Name())]
		if !ok {
			panic(fmt.Sprintf("httpapi: web/%s: no content type for its extension", e.Name()))
		}
		sum := sha256.Sum256(b)
		out[e.Name()] = asset{name: e.Name(), ctype: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, body: b}
	}
	return out
}

// mountPage serves the search page at /, the status page at /status and their files at
// /assets/<name>; every other path not registered elsewhere is a 404.
func mountPage(mux *http.ServeMux) {
	assets := loadAssets()
	index := assets["index.html"]
	status := assets["status.html"]
	delete(assets, "index.html")
	delete(assets, "status.html")
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { serveAsset(w, r, index) })
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) { serveAsset(w, r, status) })
	mux.HandleFunc("GET /assets/{name}", func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		serveAsset(w, r, a)
	})
}

func serveAsset(w http.ResponseWriter, r *http.Request, a asset) {
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	// Revalidate each time (a new binary may bring new assets); the ETag makes that a 304.
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(a.body))
}
