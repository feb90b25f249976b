package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/homeindex/homeindex/sdk"
)

// version is this module's output version: Check skips files whose version.json holds it.
const version = 1

// module is the example handler.
type module struct{}

// Check runs a file unless its version.json says version 1.
func (module) Check(_ context.Context, job *sdk.Job) (bool, error) {
	v, err := readVersion(job.MetadataDir)
	if err != nil {
		job.Log.Warn().Err(err).Msg("unreadable version.json: running again")
		return true, nil
	}
	return v != version, nil
}

// Run writes version.json and returns note "hello" and content "hello world".
func (module) Run(_ context.Context, job *sdk.Job) (sdk.Result, error) {
	job.Log.Info().Str("path", job.Path).Msg("start") // a field: a name may hold a newline
	if err := writeVersion(job.MetadataDir); err != nil {
		return sdk.Result{}, err
	}
	job.Log.Info().Msg("done")
	return sdk.Result{Document: map[string]any{"note": "hello"}, Content: sdk.Text("hello world")}, nil
}

// readVersion returns the version in dir/version.json, 0 when there is none.
func readVersion(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "version.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return parseVersion(b)
}

func parseVersion(b []byte) (int, error) {
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return 0, fmt.Errorf("version.json: %w", err)
	}
	return v.Version, nil
}

func writeVersion(dir string) error {
	return os.WriteFile(filepath.Join(dir, "version.json"), []byte(fmt.Sprintf("{\n    \"version\": %d\n}", version)), 0o644)
}
