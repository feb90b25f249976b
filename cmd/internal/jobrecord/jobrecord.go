// Package jobrecord lets the example and test modules record every check and run they do, so
// the end-to-end suite can judge ordering, exclusivity and retries from real timings: with
// RECORD_FILE set, Wrap appends one JSON line per call (Entry) to that file. Without it, Wrap
// returns the handler unchanged.
package jobrecord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/sdk"
)

// EnvRecordFile names the file the records are appended to.
const EnvRecordFile = "RECORD_FILE"

// Entry is one recorded call. Start and End are Unix times in seconds (float, like the
// protocol's deadlines), taken on this machine's clock around the handler call.
type Entry struct {
	ID string `json:"id"`
	// Path is the document's first paths key, the file the module opened: its exact bytes (in
	// JSON, bytes that are not UTF-8 as \udcXX escapes, as Python's runtime writes them).
	Path    protocol.Name `json:"path"`
	Module  string        `json:"module"`
	Worker  string        `json:"worker"` // WORKER_ID, or pid<n> when it is unset
	Phase   string        `json:"phase"`  // "check" or "run"
	Attempt int           `json:"attempt"`
	Start   float64       `json:"start"`
	End     float64       `json:"end"`
	// Result is "true" or "false" for a check, "ok" for a run, "error" when the handler
	// returned an error (Error holds it).
	Result string `json:"result"`
	Error  string `json:"error,omitempty"`
	// SHA256 is, for a run, the hex SHA-256 of the file at the path the SDK handed the module
	// (Job.Path), read after the run: it proves that path opens the file the document names.
	SHA256 string `json:"sha256,omitempty"`
}

// Wrap returns h recording to $RECORD_FILE, or h itself when RECORD_FILE is unset.
func Wrap(h sdk.Handler, getenv func(string) string) sdk.Handler {
	path := getenv(EnvRecordFile)
	if path == "" {
		return h
	}
	module := getenv(sdk.EnvModuleName)
	if module == "" {
		module = getenv(sdk.EnvQueueName)
	}
	worker := getenv(sdk.EnvWorkerID)
	if worker == "" {
		worker = fmt.Sprintf("pid%d", os.Getpid())
	}
	return &recorder{h: h, path: path, module: module, worker: worker}
}

type recorder struct {
	h                    sdk.Handler
	path, module, worker string
	mu                   sync.Mutex
}

func (r *recorder) Check(ctx context.Context, job *sdk.Job) (bool, error) {
	start := time.Now()
	ok, err := r.h.Check(ctx, job)
	r.write(job, "check", start, fmt.Sprint(ok), err)
	return ok, err
}

func (r *recorder) Run(ctx context.Context, job *sdk.Job) (sdk.Result, error) {
	start := time.Now()
	res, err := r.h.Run(ctx, job)
	r.write(job, "run", start, "ok", err)
	return res, err
}

// write appends the entry as one line with one write (O_APPEND), so lines from several
// processes sharing a file do not interleave. A failed write is logged to the job's log: the
// recording must never change what the module does.
func (r *recorder) write(job *sdk.Job, phase string, start time.Time, result string, err error) {
	e := Entry{ID: job.ID, Module: r.module, Worker: r.worker, Phase: phase, Attempt: job.Attempt,
		Start: seconds(start), End: seconds(time.Now()), Result: result}
	if len(job.Document.Paths) > 0 {
		e.Path = protocol.Name(job.Document.Paths[0].Path)
	}
	if phase == "run" && job.Path != "" {
		e.SHA256 = fileSHA256(job.Path)
	}
	if err != nil {
		e.Result, e.Error = "error", err.Error()
	}
	line, _ := json.Marshal(e) // plain fields: cannot fail; one line, whatever the name holds
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ferr := os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if ferr == nil {
		_, ferr = f.Write(append(line, '\n'))
		if cerr := f.Close(); ferr == nil {
			ferr = cerr
		}
	}
	if ferr != nil {
		job.Log.Warn().Err(ferr).Str("file", r.path).Msg("job record not written")
	}
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// fileSHA256 returns the hex SHA-256 of a file's content, or "error: ..." when it cannot be read.
func fileSHA256(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "error: " + err.Error()
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "error: " + err.Error()
	}
	return hex.EncodeToString(h.Sum(nil))
}
