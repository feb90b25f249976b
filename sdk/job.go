package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/rs/zerolog"
)

// maxReasonBytes bounds the failure text sent to the daemon.
const maxReasonBytes = 2000

// Items this worker must not process: it sets them aside (setAside).
var (
	errUIDMismatch = errors.New("uid mismatch")
	errUnreadable  = errors.New("unreadable item")
)

// newJob reads a held item. An error wrapping errUIDMismatch or errUnreadable means "not for
// this worker"; any other error is permanent (the item can never be processed). job is
// usable for logging either way.
func (w *Worker) newJob(l lease) (*Job, error) {
	var doc protocol.Document
	info, err := readItem(l.item, &doc)
	if err != nil {
		return &Job{Log: w.log.With().Str("phase", string(l.phase())).Logger()},
			fmt.Errorf("%w: %w", errUnreadable, err)
	}
	job := &Job{
		ID:       info.ID,
		Document: doc,
		echo:     echoOf(l.item, info),
		Log:      w.jobLog(l.phase(), info.ID, info.Job.Attempt),
	}
	if info.HasJob {
		job.Attempt = info.Job.Attempt
	}
	// Upstream accepts an item without uid, and compares str(uid) otherwise.
	if info.UID != "" && info.UID != w.cfg.UID {
		return job, fmt.Errorf("%w: item uid %q, MODULE_UID %q", errUIDMismatch, info.UID, w.cfg.UID)
	}
	if doc.ID != info.ID { // the document did not parse (readItem left it empty)
		err := json.Unmarshal([]byte(l.item), &protocol.Document{})
		if err == nil {
			err = fmt.Errorf("id %q, want %q", doc.ID, info.ID)
		}
		return job, Permanent(fmt.Errorf("unreadable document: %w", err))
	}
	if !safeName(info.ID) {
		return job, Permanent(fmt.Errorf("document id %q cannot name a directory", info.ID))
	}
	if len(job.Document.Paths) == 0 {
		return job, Permanent(errors.New("document has no paths"))
	}
	rel := filepath.FromSlash(job.Document.Paths[0].Path)
	p := filepath.Join(w.cfg.FilesDir, rel)
	root := filepath.Clean(w.cfg.FilesDir)
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	if filepath.IsAbs(rel) || !strings.HasPrefix(p, root) {
		return job, Permanent(fmt.Errorf("path %q leaves FILES_DIRECTORY", job.Document.Paths[0].Path))
	}
	job.Path = p
	job.MetadataDir = filepath.Join(w.cfg.MetadataDir, "by-id", info.ID, w.cfg.Module)
	return job, nil
}

// jobLog is the logger of a job in one phase.
func (w *Worker) jobLog(phase protocol.Phase, id string, attempt int) zerolog.Logger {
	return w.log.With().Str("id", id).Str("phase", string(phase)).Int("attempt", attempt).Logger()
}

// readItem reads an item's id, uid and job fields, and its document into doc (left empty if
// the document does not parse). Items built by homeindexd take a fast path that reads the
// document once; others (an upstream core's) are parsed by protocol.ParseItem. The document
// reads itself (UnmarshalJSON): json.Unmarshal would first scan the whole item once more.
func readItem(item string, doc *protocol.Document) (protocol.ItemInfo, error) {
	if uid, job, ours := protocol.ItemJob(item); ours && doc.UnmarshalJSON([]byte(item)) == nil && doc.ID != "" {
		return protocol.ItemInfo{ID: doc.ID, UID: uid, HasJob: true, Job: job}, nil
	}
	info, err := protocol.ParseItem(item)
	if err != nil {
		return info, err
	}
	if doc.UnmarshalJSON([]byte(item)) != nil {
		*doc = protocol.Document{}
	}
	return info, nil
}

// echoOf is the document a done message carries for an item. An item from homeindexd (job
// fields) is answered with its identity only, {"id", "uid", "_hi_job", "_hi_attempt",
// "_hi_since"}, so a result never carries other modules' fields as they were at dispatch. An
// item from an upstream core is echoed whole: that core replaces document.json with the
// returned document.
func echoOf(item string, info protocol.ItemInfo) string {
	if !info.HasJob {
		return item
	}
	var b strings.Builder
	b.WriteString(`{"` + protocol.FieldID + `":` + quote(info.ID))
	if info.UID != "" {
		b.WriteString(`,"` + protocol.FieldUID + `":` + quote(info.UID))
	}
	b.WriteString(`,"` + protocol.FieldJob + `":` + quote(info.Job.Token) +
		`,"` + protocol.FieldAttempt + `":` + strconv.Itoa(info.Job.Attempt) +
		`,"` + protocol.FieldSince + `":` + strconv.FormatInt(info.Job.Since, 10) + `}`)
	return b.String()
}

func safeName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00")
}

// reject handles an item newJob refused.
func (w *Worker) reject(l lease, job *Job, err error) error {
	switch {
	case errors.Is(err, errUIDMismatch):
		return w.setAside(l, job.Log, "uid mismatch", err)
	case errors.Is(err, errUnreadable):
		return w.setAside(l, job.Log, "unreadable item", err)
	}
	job.Log.Error().Err(err).Msg("cannot process item: failing it permanently")
	return w.fail(l, job, err)
}

// doCheck runs Check on a held item and moves it on: to :run, or back to the daemon.
func (w *Worker) doCheck(l lease) error {
	job, err := w.newJob(l)
	if err != nil {
		return w.reject(l, job, err)
	}
	ok, oc, herr := callHandler(w, l, job.Log, func(ctx context.Context) (bool, error) { return w.h.Check(ctx, job) })
	switch oc {
	case timedOut:
		job.Log.Warn().Dur("timeout", w.cfg.Timeout).Msg("check timed out: result discarded, the reaper retries the item")
		return nil
	case handedBack:
		return w.handBack(l, job.Log)
	}
	if herr != nil {
		job.Log.Warn().Err(herr).Bool("permanent", IsPermanent(herr)).Msg("check failed")
		return w.fail(l, job, herr)
	}
	if ok {
		run, next, err := w.runNow(l, job.Log)
		switch {
		case err != nil:
			return err
		case next == runThis:
			job.Log = w.jobLog(protocol.PhaseRun, job.ID, job.Attempt)
			return w.runJob(run, job)
		case next == runHead:
			return w.doRun(run)
		case next == runDropped:
			return nil
		}
		_, err = w.finish(l, job.Log, w.keys.run, l.item)
		return err
	}
	_, err = w.finish(l, job.Log, protocol.DoneKey, skipMessage(w.cfg.Module, job.echo))
	return err
}

// What becomes of a checked item (runNow).
type runNext int

const (
	runQueued  runNext = iota // nothing moved: the caller sends the item to <m>:run
	runThis                   // the item itself is this worker's run now, under the returned lease
	runHead                   // the item is queued; the returned lease holds the run that was first
	runDropped                // no longer held: the check's outcome was dropped (logged)
)

// runNow sends a checked item to <m>:run and takes this worker's next run in one script
// (runNowScript) when the worker is in a run phase, holding its share tokens: when nothing
// else waits, the item itself, whose Job (the one Check saw) Run then gets. It saves a claim,
// a finish and, for the item itself, a second reading of the item.
func (w *Worker) runNow(l lease, log zerolog.Logger) (lease, runNext, error) {
	if !w.mayRun() {
		return lease{}, runQueued, nil
	}
	ctx, cancel := w.redisCtx()
	defer cancel()
	keys := []string{protocol.TimeoutsKey, protocol.ProcessingKey(l.queue), w.keys.run, protocol.ProcessingKey(w.keys.run)}
	if w.shares != nil {
		keys = append(keys, w.shares.lists...)
	}
	start := time.Now() // before the script: the local deadline never falls after Redis's
	self := lease{queue: w.keys.run, item: l.item, deadline: start.Add(w.cfg.Timeout)}
	v, err := runNowScript.Run(ctx, w.rdb, keys, l.member(), l.item, w.timeout, self.member(), w.cfg.WorkerID).Result()
	if err != nil {
		return lease{}, runQueued, fmt.Errorf("hand the checked item to its run: %w", err)
	}
	switch v := v.(type) {
	case []any:
		if item, ok := v[0].(string); ok && len(v) == 1 {
			if item == l.item {
				return self, runThis, nil
			}
			return lease{queue: w.keys.run, item: item, deadline: self.deadline}, runHead, nil
		}
	case int64:
		if v == runNowNotHolder {
			return lease{}, runQueued, nil
		}
		if v == heldGone || v == heldExpired {
			_, err := heldOutcome(log, v, "hand the checked item to its run")
			return lease{}, runDropped, err
		}
	}
	return lease{}, runQueued, fmt.Errorf("hand the checked item to its run: unexpected reply %v", v)
}

// doRun runs Run on a held item, logging to log.txt, and sends the result to the daemon.
func (w *Worker) doRun(l lease) error {
	job, err := w.newJob(l)
	if err != nil {
		return w.reject(l, job, err)
	}
	return w.runJob(l, job)
}

// runJob runs Run on a held run item whose job is read.
func (w *Worker) runJob(l lease, job *Job) error {
	if err := makeDir(job.MetadataDir); err != nil {
		job.Log.Error().Err(err).Msg("cannot create the metadata directory")
		return w.fail(l, job, fmt.Errorf("create metadata directory: %w", err))
	}
	rl := w.openRunLog(job.MetadataDir, job.Log.With())
	defer rl.close()
	job.Log = rl.log
	job.Log.Info().Str("path", job.Path).Msg("run started")
	res, oc, herr := callHandler(w, l, job.Log, func(ctx context.Context) (Result, error) { return w.h.Run(ctx, job) })
	switch oc {
	case timedOut:
		job.Log.Warn().Dur("timeout", w.cfg.Timeout).Msg("run timed out: result discarded, the daemon retries the job")
		return nil
	case handedBack:
		return w.handBack(l, job.Log)
	}
	if herr != nil {
		job.Log.Error().Err(herr).Bool("permanent", IsPermanent(herr)).Msg("run failed")
		return w.fail(l, job, herr)
	}
	msg, err := resultMessage(w.cfg.Module, job.echo, res)
	if err != nil {
		job.Log.Error().Err(err).Msg("run result rejected: failing the job permanently")
		return w.fail(l, job, err)
	}
	sent, err := w.finish(l, job.Log, protocol.DoneKey, msg)
	if sent {
		job.Log.Info().Msg("run done")
	}
	return err
}

type outcome int

const (
	returned   outcome = iota // the handler returned before its deadline
	timedOut                  // it returned after its deadline: the result is discarded
	handedBack                // the worker stopped and its grace ended: hand the item back
)

// callHandler runs fn in its own goroutine with the job's deadline, turning a panic into an
// error. It waits for fn to return, however late (a handler that ignores ctx is nagged about,
// not abandoned, so two jobs never overlap), except when the worker's shutdown grace ends.
func callHandler[T any](w *Worker, l lease, log zerolog.Logger, fn func(context.Context) (T, error)) (T, outcome, error) {
	ctx, cancel := context.WithDeadline(w.jobCtx, l.deadline)
	defer cancel()
	type ret struct {
		v   T
		err error
	}
	done := make(chan ret, 1)
	go func() {
		var r ret
		defer func() {
			if p := recover(); p != nil {
				r.err = fmt.Errorf("panic: %v", p)
				log.Error().Str("stack", string(debug.Stack())).Msg("handler panicked")
			}
			done <- r
		}()
		r.v, r.err = fn(ctx)
	}()
	nag := time.NewTimer(time.Until(l.deadline) + w.cfg.Timeout)
	defer nag.Stop()
	for {
		select {
		case r := <-done:
			switch {
			case w.jobCtx.Err() != nil && r.err != nil:
				return r.v, handedBack, r.err
			case !time.Now().Before(l.deadline) || errors.Is(ctx.Err(), context.DeadlineExceeded):
				return r.v, timedOut, r.err
			}
			if r.err != nil {
				r.err = truncated(r.err)
			}
			return r.v, returned, r.err
		case <-w.jobCtx.Done():
			var zero T
			return zero, handedBack, w.jobCtx.Err()
		case <-nag.C:
			log.Warn().Msg("handler still running long after its deadline: it should return when ctx ends")
			nag.Reset(w.cfg.Timeout)
		}
	}
}

// truncated bounds an error's text, keeping whether it is permanent.
func truncated(err error) error {
	s := err.Error()
	if len(s) <= maxReasonBytes {
		return err
	}
	short := errors.New(strings.ToValidUTF8(s[:maxReasonBytes], "") + "…")
	if IsPermanent(err) {
		return Permanent(short)
	}
	return short
}

// makeDir is os.MkdirAll in one system call for the usual case, a first run whose parent
// (by-id/<id>, written by the daemon) exists.
func makeDir(dir string) error {
	err := os.Mkdir(dir, 0o755)
	if err == nil {
		return nil
	}
	return os.MkdirAll(dir, 0o755)
}
