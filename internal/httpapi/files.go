package httpapi

import (
	"context"
	"errors"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/metadata"
	"github.com/homeindex/homeindex/protocol"
)

// Serving files: /files/<id> streams an online copy of a document's content, read-only, with
// Range requests (audio and video seek) and conditional requests (the id is the content hash,
// hence a perfect ETag). Only documents the catalog knows are served, and only through
// os.Root on INDEX_DIRECTORY, so neither "..", an absolute path nor a symlink can reach
// anything outside it. /files/<id>/thumbnail and /files/<id>/preview serve the thumbnail
// module's pictures from the metadata directory.

// Documents is the part of the catalog /files reads.
type Documents interface {
	Document(ctx context.Context, id string) (protocol.Document, catalog.DocState, error)
	Drives(ctx context.Context) (map[string]bool, error)
}

// Library says where documents' files live.
type Library struct {
	Docs Documents
	// IndexDir is INDEX_DIRECTORY; paths in documents are relative to it.
	IndexDir string
	// ArchiveRel is ARCHIVE_DIRECTORY relative to IndexDir (slash-separated): its first-level
	// directories are drives, which may be unplugged.
	ArchiveRel string
	// MetadataDir is METADATA_DIRECTORY, where by-id/<id>/thumbnail/ lives.
	MetadataDir string
}

// WithFiles serves /files/<id> and its thumbnails from lib.
func WithFiles(lib Library) Option {
	return func(s *serverSetup) {
		s.mux.HandleFunc("GET /files/{id}", lib.serveFile)
		s.mux.HandleFunc("GET /files/{id}/{picture}", lib.servePicture)
	}
}

// inlineTypes are shown by the browser; everything else is downloaded. HTML, SVG and XML are
// never inline: served from this origin they could run script against the API.
var inlineTypes = map[string]bool{
	"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true, "image/avif": true,
	"image/bmp": true, "application/pdf": true, "text/plain": true, "application/json": true,
}

// filesCSP applies to everything /files serves: a document opened from here runs no script
// and can reach nothing. PDFs are the exception: the browser's viewer refuses to run in a
// sandboxed document; it runs a PDF's own script in its own isolated viewer.
const filesCSP = "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'"

func (lib Library) serveFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	doc, ok := lib.document(w, r, id)
	if !ok {
		return
	}
	root, err := os.OpenRoot(lib.IndexDir)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "INDEX_DIRECTORY cannot be opened: "+errors.Unwrap(err).Error())
		return
	}
	defer root.Close()
	drives, err := lib.Docs.Drives(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	var offline []string
	changed := false
	for _, p := range doc.Paths {
		if drive := lib.driveOf(p.Path); drive != "" && !drives[drive] {
			if !slices.Contains(offline, drive) {
				offline = append(offline, drive)
			}
			continue
		}
		f, info, err := openRegular(root, p.Path)
		if err != nil {
			continue // gone, unreadable, escaping or not a file: try the next copy
		}
		if info.Size() != doc.Size {
			f.Close()
			changed = true
			continue
		}
		defer f.Close()
		serveContent(w, r, f, info, doc, path.Base(p.Path))
		return
	}
	switch {
	case len(offline) > 0:
		writeError(w, http.StatusConflict, "offline: plug in drive "+strings.Join(offline, " or ")+" to open this file")
	case changed:
		writeError(w, http.StatusConflict, "the file changed on disk since it was indexed; it is served again after the next sync")
	default:
		writeError(w, http.StatusNotFound, "no readable copy of this file is on disk")
	}
}

// document answers 404 for ids the catalog does not hold as live documents.
func (lib Library) document(w http.ResponseWriter, r *http.Request, id string) (protocol.Document, bool) {
	if !metadata.ValidID(id) {
		writeError(w, http.StatusNotFound, "no such file")
		return protocol.Document{}, false
	}
	doc, state, err := lib.Docs.Document(r.Context(), id)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return protocol.Document{}, false
	}
	if state != catalog.DocLive {
		writeError(w, http.StatusNotFound, "no such file")
		return protocol.Document{}, false
	}
	return doc, true
}

// driveOf returns the drive a relative path lies on, or "" for a path outside the archive.
func (lib Library) driveOf(rel string) string {
	if lib.ArchiveRel == "" {
		return ""
	}
	rest, ok := strings.CutPrefix(rel, lib.ArchiveRel+"/")
	if !ok {
		return ""
	}
	drive, _, _ := strings.Cut(rest, "/")
	return drive
}

// openRegular opens rel inside root and insists on a regular file (not a directory, device or
// FIFO, which would block).
func openRegular(root *os.Root, rel string) (*os.File, fs.FileInfo, error) {
	info, err := root.Stat(filepath.FromSlash(rel))
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fs.ErrInvalid
	}
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, nil, err
	}
	info, err = f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, fs.ErrInvalid
	}
	return f, info, nil
}

func serveContent(w http.ResponseWriter, r *http.Request, f *os.File, info fs.FileInfo, doc protocol.Document, name string) {
	h := w.Header()
	ctype := doc.Type
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	base, _, _ := strings.Cut(ctype, ";")
	base = strings.ToLower(strings.TrimSpace(base))
	inline := inlineTypes[base] || strings.HasPrefix(base, "audio/") || strings.HasPrefix(base, "video/")
	if base == "text/plain" && !strings.Contains(ctype, "charset") {
		ctype = "text/plain; charset=utf-8"
	}
	if !inline && strings.HasPrefix(base, "text/") {
		ctype = "application/octet-stream" // never let the browser render HTML from here
	}
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", disposition(inline, name))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if base != "application/pdf" {
		h.Set("Content-Security-Policy", filesCSP)
	}
	h.Set("Cache-Control", "private, no-cache")
	h.Set("ETag", `"`+doc.ID+`"`)
	http.ServeContent(w, r, "", info.ModTime(), f)
}

// disposition names the file for the browser's save dialog. Names are bytes: one that is not
// UTF-8 gets replacement characters in the header (the bytes on disk are what is served).
func disposition(inline bool, name string) string {
	kind := "attachment"
	if inline {
		kind = "inline"
	}
	name = strings.ToValidUTF8(name, "\uFFFD")
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '_'
		}
		return r
	}, name)
	if v := mime.FormatMediaType(kind, map[string]string{"filename": name}); v != "" {
		return v
	}
	return kind
}

// pictureNames are the thumbnail module's files for each picture, in order of preference.
var pictureNames = map[string][]string{
	"thumbnail": {"small.jpg", "small.webp", "small.png"},
	"preview":   {"preview.jpg", "preview.webp", "preview.png"},
}

// servePicture serves by-id/<id>/thumbnail/<small|preview>.<ext>; browsers may cache them for
// a day (a new thumbnail comes with new content, hence a new id).
func (lib Library) servePicture(w http.ResponseWriter, r *http.Request) {
	names, ok := pictureNames[r.PathValue("picture")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	id := r.PathValue("id")
	if _, ok := lib.document(w, r, id); !ok {
		return
	}
	root, err := os.OpenRoot(filepath.Join(lib.MetadataDir, "by-id", id, "thumbnail"))
	if err != nil {
		writeError(w, http.StatusNotFound, "no thumbnail for this file")
		return
	}
	defer root.Close()
	for _, n := range names {
		f, info, err := openRegular(root, n)
		if err != nil {
			continue
		}
		defer f.Close()
		h := w.Header()
		h.Set("Content-Type", mime.TypeByExtension(path.Ext(n)))
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", filesCSP)
		h.Set("Cache-Control", "private, max-age=86400")
		h.Set("ETag", `"`+id+"-"+n+`"`)
		http.ServeContent(w, r, "", info.ModTime(), f)
		return
	}
	writeError(w, http.StatusNotFound, "no thumbnail for this file")
}
