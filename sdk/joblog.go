package sdk

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"
)

// LogFileName is the per-module log in a document's metadata directory: every run appends its
// lines to it.
const LogFileName = "log.txt"

// runLog is the log of one run: lines go to the worker's output and to log.txt.
type runLog struct {
	file *os.File
	log  zerolog.Logger
}

// openRunLog opens dir/log.txt for appending and returns a logger writing to it (plain text,
// UTC times) and to the worker's output.
func (w *Worker) openRunLog(dir string, ctx zerolog.Context) (*runLog, error) {
	f, err := os.OpenFile(filepath.Join(dir, LogFileName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", LogFileName, err)
	}
	text := zerolog.ConsoleWriter{Out: f, NoColor: true, TimeFormat: time.RFC3339, TimeLocation: time.UTC,
		FieldsExclude: []string{"module", "worker", "id", "phase"}}
	l := ctx.Logger().Output(zerolog.MultiLevelWriter(w.out, text))
	return &runLog{file: f, log: l}, nil
}

func (r *runLog) close() {
	if err := r.file.Close(); err != nil {
		r.log.Warn().Err(err).Msg("close " + LogFileName)
	}
}
