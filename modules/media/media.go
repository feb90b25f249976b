// Package media is the media module: it reads the metadata of photos (EXIF: date taken, camera,
// lens, size, orientation, GPS), audio files (tags and duration) and videos (through ffprobe)
// and returns it under the document field "media", with the photo's position as the top-level
// "_geo" field that Meilisearch's geo filters read.
//
// Only headers are read: no pixel or sample is decoded, so a file's size never decides how much
// memory a job takes. Every parser runs behind a recover, so a file that trips one ends as a
// permanent failure of that file, never as a crash of the worker.
package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/homeindex/homeindex/sdk"
)

// Name is the module's default name (its queue and its document field).
const Name = "media"

// Field is the document field the module writes; GeoField is the top-level position.
const (
	Field    = "media"
	GeoField = "_geo"
)

// Kind is what a file is to the module.
type Kind string

// The kinds.
const (
	KindNone  Kind = ""
	KindPhoto Kind = "photo"
	KindAudio Kind = "audio"
	KindVideo Kind = "video"
)

// maxHeaderRead bounds the bytes a tag parser may read from one file (cover art included);
// past it the read fails, so no tag can make the module hold more.
const maxHeaderRead = 16 << 20

// Config configures a Module.
// EnvFFprobe names the ffprobe binary for the module's process (cmd/media-module).
const EnvFFprobe = "FFPROBE"

type Config struct {
	// FFprobe is the ffprobe binary; "" looks it up in PATH. When there is none, video is
	// declined by Check.
	FFprobe string
}

// Module is the media module's sdk.Handler.
type Module struct {
	ffprobe    string // "" when absent
	noFFprobe  sync.Once
	probeError error
}

// New returns the module. ffprobe is looked up once, here.
func New(cfg Config) *Module {
	m := &Module{ffprobe: cfg.FFprobe}
	if m.ffprobe == "" {
		if p, err := exec.LookPath("ffprobe"); err == nil {
			m.ffprobe = p
		} else {
			m.probeError = err
		}
	}
	return m
}

// HasFFprobe reports whether video is read.
func (m *Module) HasFFprobe() bool { return m.ffprobe != "" }

// extKinds maps lower-case extensions to kinds.
var extKinds = map[string]Kind{
	".jpg": KindPhoto, ".jpeg": KindPhoto, ".jpe": KindPhoto, ".tif": KindPhoto, ".tiff": KindPhoto,
	".png": KindPhoto, ".webp": KindPhoto, ".heic": KindPhoto, ".heif": KindPhoto, ".avif": KindPhoto,
	".dng": KindPhoto, ".cr2": KindPhoto, ".cr3": KindPhoto, ".nef": KindPhoto, ".arw": KindPhoto,
	".orf": KindPhoto, ".rw2": KindPhoto, ".pef": KindPhoto,
	".mp3": KindAudio, ".flac": KindAudio, ".m4a": KindAudio, ".aac": KindAudio, ".m4b": KindAudio,
	".ogg": KindAudio, ".oga": KindAudio, ".opus": KindAudio,
	".mp4": KindVideo, ".m4v": KindVideo, ".mov": KindVideo, ".mkv": KindVideo, ".webm": KindVideo,
	".avi": KindVideo,
}

// typeKinds maps MIME types (as the daemon's detection names them) to kinds, for files whose
// extension says nothing.
var typeKinds = map[string]Kind{
	"image/jpeg": KindPhoto, "image/tiff": KindPhoto, "image/png": KindPhoto, "image/webp": KindPhoto,
	"image/heic": KindPhoto, "image/heif": KindPhoto, "image/avif": KindPhoto, "image/x-adobe-dng": KindPhoto,
	"audio/mpeg": KindAudio, "audio/flac": KindAudio, "audio/x-flac": KindAudio, "audio/mp4": KindAudio,
	"audio/x-m4a": KindAudio, "audio/aac": KindAudio, "audio/ogg": KindAudio, "audio/opus": KindAudio,
	"video/mp4": KindVideo, "video/quicktime": KindVideo, "video/x-matroska": KindVideo,
	"video/webm": KindVideo, "video/x-msvideo": KindVideo,
}

// Classify decides a file's kind from its name and MIME type, without reading it.
func Classify(name, mime string) Kind {
	if k, ok := extKinds[strings.ToLower(filepath.Ext(name))]; ok {
		return k
	}
	mime, _, _ = strings.Cut(mime, ";")
	return typeKinds[strings.TrimSpace(strings.ToLower(mime))]
}

// Check says yes to photos, audio and (with ffprobe) video, from the document's name, type and
// size; it never opens the file.
func (m *Module) Check(_ context.Context, job *sdk.Job) (bool, error) {
	if job.Document.Size <= 0 {
		return false, nil
	}
	name := job.Path
	if len(job.Document.Paths) > 0 {
		name = job.Document.Paths[0].Path
	}
	k := Classify(name, job.Document.Type)
	if k == KindVideo && !m.HasFFprobe() {
		m.noFFprobe.Do(func() {
			job.Log.Warn().Err(m.probeError).Msg("ffprobe not found: video files are declined (install ffmpeg to read them)")
		})
		return false, nil
	}
	return k != KindNone, nil
}

// Run reads the file's metadata. A file that is gone, not a regular file or that no parser can
// read is a permanent failure with its reason; an I/O error is retried.
func (m *Module) Run(ctx context.Context, job *sdk.Job) (sdk.Result, error) {
	name := job.Path
	if len(job.Document.Paths) > 0 {
		name = job.Document.Paths[0].Path
	}
	info, err := m.Extract(ctx, job.Path, Classify(name, job.Document.Type))
	if err != nil {
		return sdk.Result{}, err
	}
	return info.Result(), nil
}

// Extract reads path as kind. Errors are already classified: permanent ones are wrapped by
// sdk.Permanent.
func (m *Module) Extract(ctx context.Context, path string, kind Kind) (info *Info, err error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	defer func() {
		if r := recover(); r != nil {
			info = nil
			err = sdk.Permanent(fmt.Errorf("unreadable %s: parser panic: %v", kind, r))
		}
	}()
	r := &limitedFile{f: f, left: maxHeaderRead}
	switch kind {
	case KindPhoto:
		info, err = photoReader(r)
	case KindAudio:
		info, err = audioReader(r)
	case KindVideo:
		if !m.HasFFprobe() {
			return nil, sdk.Permanent(errors.New("video needs ffprobe, which is not installed"))
		}
		info, err = m.readVideo(ctx, path)
	default:
		return nil, sdk.Permanent(fmt.Errorf("not a photo, audio or video file"))
	}
	switch {
	case err == nil:
		return info, nil
	case errors.Is(err, errReadLimit):
		return nil, sdk.Permanent(fmt.Errorf("unreadable %s: %w", kind, err))
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case isIOError(err):
		return nil, err
	default:
		return nil, sdk.Permanent(fmt.Errorf("unreadable %s: %w", kind, err))
	}
}

// openRegular opens path for reading: a file that no longer exists or is not a regular file is
// a permanent failure.
func openRegular(path string) (*os.File, error) {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, sdk.Permanent(fmt.Errorf("file is gone: %w", err))
	case err != nil:
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, sdk.Permanent(fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type()))
	}
	return f, nil
}

// isIOError reports whether err came from the operating system (worth a retry), rather than
// from a format.
func isIOError(err error) bool {
	var pe *fs.PathError
	var errno syscall.Errno
	return errors.As(err, &pe) || errors.As(err, &errno)
}

// The parsers Extract calls (tests replace them to check the recover).
var (
	photoReader = readPhoto
	audioReader = readAudio
)

var errReadLimit = errors.New("header data exceeds the read limit")

// limitedFile is an io.ReadSeeker over a file that fails once more than left bytes were read
// in total (seeks are free): whatever a tag claims, a parser cannot pull more than that.
type limitedFile struct {
	f    *os.File
	left int64
}

func (l *limitedFile) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errReadLimit
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.f.Read(p)
	l.left -= int64(n)
	return n, err
}

func (l *limitedFile) Seek(off int64, whence int) (int64, error) { return l.f.Seek(off, whence) }

// ReadAt reads without moving the offset; it counts against the limit too.
func (l *limitedFile) ReadAt(p []byte, off int64) (int, error) {
	if l.left <= 0 {
		return 0, errReadLimit
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.f.ReadAt(p, off)
	l.left -= int64(n)
	return n, err
}

// size returns the file's size.
func (l *limitedFile) size() (int64, error) {
	st, err := l.f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

var _ io.ReadSeeker = (*limitedFile)(nil)
