package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/homeindex/homeindex/sdk"
)

// module crashes the process in Run when crash is set, or when the file's path contains
// crashOn (if not empty).
type module struct {
	crash   bool
	crashOn string
	exit    func(code int) // os.Exit; the SDK turns panics into failed attempts, so dying takes an exit
}

// Check always runs.
func (module) Check(context.Context, *sdk.Job) (bool, error) { return true, nil }

// Run dies (crash) or writes version.json.
func (m module) Run(_ context.Context, job *sdk.Job) (sdk.Result, error) {
	if m.crash || (m.crashOn != "" && strings.Contains(job.Path, m.crashOn)) {
		job.Log.Error().Msg("crashing")
		m.exit(1)
	}
	if err := os.WriteFile(filepath.Join(job.MetadataDir, "version.json"), []byte(`{"version": 1}`), 0o644); err != nil {
		return sdk.Result{}, err
	}
	return sdk.Result{}, nil
}
