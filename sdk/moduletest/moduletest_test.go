package moduletest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/sdk"
	"github.com/homeindex/homeindex/sdk/moduletest"
)

// wordCount skips empty files, fails on "bad", counts words otherwise and leaves words.txt.
var wordCount = sdk.HandlerFuncs{
	CheckFunc: func(_ context.Context, job *sdk.Job) (bool, error) {
		return job.Document.Size > 0, nil
	},
	RunFunc: func(_ context.Context, job *sdk.Job) (sdk.Result, error) {
		b, err := os.ReadFile(job.Path)
		if err != nil {
			return sdk.Result{}, err
		}
		if string(b) == "bad" {
			return sdk.Result{}, sdk.Permanent(errors.New("bad file"))
		}
		words := strings.Fields(string(b))
		if err := os.WriteFile(filepath.Join(job.MetadataDir, "words.txt"), []byte(strings.Join(words, "\n")), 0o644); err != nil {
			return sdk.Result{}, err
		}
		job.Log.Info().Int("words", len(words)).Msg("counted")
		return sdk.Result{Document: map[string]any{"words": len(words)}, Content: sdk.Texts(words)}, nil
	},
}

func TestRun(t *testing.T) {
	t.Parallel()
	out := moduletest.Run(t, wordCount,
		moduletest.File("docs/a.txt", "hello big world"),
		moduletest.File("empty.txt", ""),
		moduletest.File("bad.txt", "bad"),
	)
	if len(out) != 3 {
		t.Fatalf("got %d outcomes, want 3", len(out))
	}
	a, empty, bad := out[0], out[1], out[2]
	if !a.Ran || a.Skipped || a.Err != "" || string(a.Fields["words"]) != "3" || string(a.Content) != `["hello","big","world"]` {
		t.Errorf("a.txt: %+v", a)
	}
	if string(a.Files["words.txt"]) != "hello\nbig\nworld" || !strings.Contains(string(a.Files["log.txt"]), "counted") {
		t.Errorf("a.txt files: %q", a.Files)
	}
	if empty.Ran || !empty.Skipped || len(empty.Files) != 0 {
		t.Errorf("empty.txt: %+v", empty)
	}
	if bad.Ran || bad.Skipped || bad.Err != "bad file" || !bad.Permanent {
		t.Errorf("bad.txt: %+v", bad)
	}
}

func TestRunTimeout(t *testing.T) {
	t.Parallel()
	slow := sdk.HandlerFuncs{RunFunc: func(ctx context.Context, _ *sdk.Job) (sdk.Result, error) {
		<-ctx.Done()
		return sdk.Result{}, ctx.Err()
	}}
	out := moduletest.Run(t, slow, moduletest.File("a.txt", "x"),
		moduletest.Configure(func(c *sdk.Config) { c.Timeout = 300 * time.Millisecond }))
	if !out[0].TimedOut || out[0].Ran || out[0].Message != "" {
		t.Errorf("got %+v, want a timeout", out[0])
	}
}
