package sdk

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestRunLogOpensAtFirstLine: log.txt holds a run's lines at the worker's level, and a run
// that logs nothing at that level (LOGGING_LEVEL=error) leaves no log.txt behind.
func TestRunLogOpensAtFirstLine(t *testing.T) {
	t.Parallel()
	for _, level := range []zerolog.Level{zerolog.InfoLevel, zerolog.ErrorLevel} {
		e := newEnv(t)
		id := e.file("a.txt", "abc")
		cfg := e.config("m")
		cfg.LogLevel = level
		e.push("m:run", e.item(id, "a.txt", "uid-m", 1))
		e.serve(cfg, HandlerFuncs{RunFunc: func(context.Context, *Job) (Result, error) { return Result{}, nil }})
		e.nextDone()
		path := filepath.Join(e.meta, "by-id", id, "m", LogFileName)
		switch level {
		case zerolog.InfoLevel: // "run done" follows the done message
			e.eventually("run started and run done in log.txt", func() bool {
				b, _ := os.ReadFile(path)
				return strings.Contains(string(b), "run started") && strings.Contains(string(b), "run done")
			})
		default:
			b, err := os.ReadFile(path)
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("at error, log.txt %q, %v: want none", b, err)
			}
			if st, err := os.Stat(filepath.Join(e.meta, "by-id", id, "m")); err != nil || !st.IsDir() {
				t.Errorf("the module's metadata directory: %v", err)
			}
		}
	}
}

// TestRunLogUnopenable: when log.txt cannot be opened the run still completes, its lines go to
// the worker's output, and the worker says why once.
func TestRunLogUnopenable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.file("a.txt", "abc")
	if err := os.MkdirAll(filepath.Join(e.meta, "by-id", id, "m", LogFileName), 0o755); err != nil {
		t.Fatal(err)
	}
	e.push("m:run", e.item(id, "a.txt", "uid-m", 1))
	e.serve(e.config("m"), HandlerFuncs{RunFunc: func(_ context.Context, job *Job) (Result, error) {
		job.Log.Info().Msg("one")
		job.Log.Info().Msg("two")
		return Result{Document: map[string]any{"ok": true}}, nil
	}})
	if m, _ := mustDone(t, e.nextDone()); m.Error != "" {
		t.Errorf("run failed: %s", m.Error)
	}
	if n := e.logs.count("cannot open " + LogFileName); n != 1 {
		t.Errorf("%d warnings about log.txt, want 1", n)
	}
	if e.logs.count(`"message":"two"`) != 1 {
		t.Error("the run's lines did not reach the worker's output")
	}
}
