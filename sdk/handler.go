package sdk

import (
	"context"
	"errors"

	"github.com/homeindex/homeindex/protocol"
	"github.com/rs/zerolog"
)

// Handler is what a module implements: Check decides whether a file needs work, Run does it.
// The worker calls them one job at a time.
//
// ctx ends at the job's deadline (TIMEOUT after the worker took the item) or when the worker
// shuts down after its grace period; a handler must return soon after. Whatever it returns once
// the deadline has passed is discarded and the job is retried by the daemon. A returned error
// or a panic fails this attempt (wrap it in Permanent to park the job at once); the worker keeps
// serving.
type Handler interface {
	// Check reports whether Run should process the job. It should be fast and have no side
	// effects: it runs without holding resource-share tokens. false sends the document back
	// unchanged. true queues the job for Run, or, when this worker is in a run phase, runs it
	// at once: Run is then given the same *Job.
	Check(ctx context.Context, job *Job) (bool, error)
	// Run processes the job and returns what to merge into the document.
	Run(ctx context.Context, job *Job) (Result, error)
}

// Loader is implemented by handlers that prepare something costly (a model on a GPU) before
// runs. Load is called when a run phase starts, before the phase's first item is taken, so its
// duration never counts against an item's TIMEOUT. An error stops the worker.
type Loader interface {
	Load(ctx context.Context) error
}

// Unloader is implemented by handlers that release what Load prepared. Unload is called when a
// run phase ends: no run work is left, or the worker yields its resource-share tokens. It is
// never called while idle. An error stops the worker.
type Unloader interface {
	Unload(ctx context.Context) error
}

// HandlerFuncs adapts functions to Handler, Loader and Unloader, like http.HandlerFunc. Nil
// CheckFunc means "always run"; nil LoadFunc and UnloadFunc do nothing. RunFunc is required.
type HandlerFuncs struct {
	CheckFunc  func(ctx context.Context, job *Job) (bool, error)
	RunFunc    func(ctx context.Context, job *Job) (Result, error)
	LoadFunc   func(ctx context.Context) error
	UnloadFunc func(ctx context.Context) error
}

// Check calls f.CheckFunc, or returns true when it is nil.
func (f HandlerFuncs) Check(ctx context.Context, job *Job) (bool, error) {
	if f.CheckFunc == nil {
		return true, nil
	}
	return f.CheckFunc(ctx, job)
}

// alwaysYes reports that Check cannot say no (nil CheckFunc): the worker then takes check items
// straight into their run while in a run phase (claimScript), with no Check call.
func (f HandlerFuncs) alwaysYes() bool { return f.CheckFunc == nil }

// Run calls f.RunFunc.
func (f HandlerFuncs) Run(ctx context.Context, job *Job) (Result, error) {
	if f.RunFunc == nil {
		return Result{}, Permanent(errors.New("sdk.HandlerFuncs: RunFunc is nil"))
	}
	return f.RunFunc(ctx, job)
}

// Load calls f.LoadFunc if set.
func (f HandlerFuncs) Load(ctx context.Context) error {
	if f.LoadFunc == nil {
		return nil
	}
	return f.LoadFunc(ctx)
}

// Unload calls f.UnloadFunc if set.
func (f HandlerFuncs) Unload(ctx context.Context) error {
	if f.UnloadFunc == nil {
		return nil
	}
	return f.UnloadFunc(ctx)
}

// Job is one file to check or run.
type Job struct {
	// ID is the document id (the content hash).
	ID string
	// Path is the file to read: FILES_DIRECTORY joined with the first key of the document's
	// paths (the daemon puts an available path first).
	Path string
	// Document is the file's document as queued: core fields and every module's fields so far.
	Document protocol.Document
	// MetadataDir is this module's directory for the document:
	// METADATA_DIRECTORY/by-id/<id>/<module>. It exists during Run; during Check it may not.
	MetadataDir string
	// Attempt is 1 for a job's first attempt, 2 for its first retry, ...; 0 when the item came
	// from a core that adds no job fields (the upstream Python core).
	Attempt int
	// Log logs for this job. During Run every line is also appended to MetadataDir/log.txt.
	Log zerolog.Logger

	echo string // the document done messages carry (echoOf)
}

// Result is what Run returns: fields to merge into the document and text to index.
type Result struct {
	// Document holds top-level fields to merge into the document, e.g. {"caption": {...}}.
	// Core fields (id, paths, next, uid, ... and _hi_*) belong to the daemon: returning one
	// fails the job permanently.
	Document map[string]any
	// Content is saved as content.json and chunked for search: Text, Texts or Segments. Nil
	// means no content.
	Content Content
}

// Content is the text a module returns for indexing: Text, Texts or Segments.
type Content interface {
	isContent()
}

// Text is content made of one string.
type Text string

// Texts is content made of several strings (pages, frames, ...).
type Texts []string

// Segments is content made of segments with extra fields (time offsets, page numbers).
type Segments []Segment

// Segment is one piece of content: its text and extra fields such as "time_offset",
// "time_length" or "page", written beside "text".
type Segment struct {
	Text   string
	Fields map[string]any // must not hold "text"
}

func (Text) isContent()     {}
func (Texts) isContent()    {}
func (Segments) isContent() {}

// PermanentError marks an error that no retry can fix; see Permanent.
type PermanentError struct {
	Err error // nil when Permanent was given nil
}

// Error returns the wrapped error's text.
func (e *PermanentError) Error() string {
	if e.Err == nil {
		return "permanent failure"
	}
	return e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err so that the job is parked at once (no further attempts) with err's text
// as the reason, e.g. for a file format the module can never read. Permanent(nil) is still an
// error.
func Permanent(err error) error { return &PermanentError{Err: err} }

// IsPermanent reports whether err or an error it wraps came from Permanent.
func IsPermanent(err error) bool {
	var pe *PermanentError
	return errors.As(err, &pe)
}
