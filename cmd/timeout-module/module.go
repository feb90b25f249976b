package main

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/homeindex/homeindex/sdk"
)

// module sleeps in Check and Run.
type module struct {
	checkSleep, runSleep time.Duration
}

// Check sleeps checkSleep, then runs a file unless its version.json says version 1.
func (m module) Check(ctx context.Context, job *sdk.Job) (bool, error) {
	if err := sleep(ctx, m.checkSleep); err != nil {
		return false, err
	}
	b, err := os.ReadFile(filepath.Join(job.MetadataDir, "version.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	var v struct {
		Version int `json:"version"`
	}
	if err != nil || json.Unmarshal(b, &v) != nil {
		return true, nil
	}
	return v.Version != 1, nil
}

// Run sleeps runSleep, writes version.json and returns nothing to merge.
func (m module) Run(ctx context.Context, job *sdk.Job) (sdk.Result, error) {
	job.Log.Info().Str("path", job.Path).Msg("start") // a field: a name may hold a newline
	if err := sleep(ctx, m.runSleep); err != nil {
		return sdk.Result{}, err
	}
	if err := os.WriteFile(filepath.Join(job.MetadataDir, "version.json"), []byte(`{"version": 1}`), 0o644); err != nil {
		return sdk.Result{}, err
	}
	job.Log.Info().Msg("done")
	return sdk.Result{}, nil
}

// sleep waits d, or returns ctx's error if it ends first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
