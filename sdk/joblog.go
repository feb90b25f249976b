package sdk

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// LogFileName is the per-module log in a document's metadata directory: every run appends its
// lines to it.
const LogFileName = "log.txt"

// runLog is the log of one run: lines go to the worker's output and to log.txt.
type runLog struct {
	file *lazyFile
	log  zerolog.Logger
}

// openRunLog returns a logger writing to the worker's output and to dir/log.txt (plain text,
// UTC times), which is opened for appending at the run's first line: a run that logs nothing
// at the worker's level (LOGGING_LEVEL=error, say) costs no open and close.
func (w *Worker) openRunLog(dir string, ctx zerolog.Context) *runLog {
	f := &lazyFile{path: filepath.Join(dir, LogFileName), log: ctx.Logger()}
	text := zerolog.ConsoleWriter{Out: f, NoColor: true, TimeFormat: time.RFC3339, TimeLocation: time.UTC,
		FieldsExclude: []string{"module", "worker", "id", "phase"}}
	l := ctx.Logger().Output(zerolog.MultiLevelWriter(w.out, text))
	return &runLog{file: f, log: l}
}

func (r *runLog) close() {
	if err := r.file.close(); err != nil {
		r.log.Warn().Err(err).Msg("close " + LogFileName)
	}
}

// lazyFile appends to path, opening it at the first Write. The handler's goroutine and the
// worker's may both log, hence the mutex. An open that fails is reported once to log (the
// worker's output), and the lines go on to the worker's output alone.
type lazyFile struct {
	path string
	log  zerolog.Logger

	mu     sync.Mutex
	f      *os.File
	failed bool
}

func (l *lazyFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil && !l.failed {
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			l.failed = true
			l.log.Warn().Err(err).Msg("cannot open " + LogFileName + ": this run's lines go to the worker's output only")
		}
		l.f = f
	}
	if l.f == nil {
		return len(p), nil
	}
	return l.f.Write(p)
}

func (l *lazyFile) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f, l.failed = nil, true // a line after close is dropped, not written to a reopened file
	return err
}
