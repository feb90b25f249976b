package jobrecord

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/homeindex/homeindex/sdk"
	"github.com/homeindex/homeindex/sdk/moduletest"
)

func TestWrapRecordsEveryCheckAndRun(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "records.jsonl")
	env := map[string]string{EnvRecordFile: file, sdk.EnvModuleName: "m", sdk.EnvWorkerID: "w1"}
	h := Wrap(sdk.HandlerFuncs{
		CheckFunc: func(_ context.Context, job *sdk.Job) (bool, error) {
			return job.Document.Paths[0].Path != "skip.txt", nil
		},
		RunFunc: func(_ context.Context, job *sdk.Job) (sdk.Result, error) {
			if job.Document.Paths[0].Path == "bad.txt" {
				return sdk.Result{}, errors.New("boom")
			}
			return sdk.Result{Document: map[string]any{"x": 1}}, nil
		},
	}, func(k string) string { return env[k] })
	moduletest.Run(t, h, moduletest.File("ok.txt", "ok"), moduletest.File("skip.txt", "skip"), moduletest.File("bad.txt", "bad"))

	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]Entry{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if e.Module != "m" || e.Worker != "w1" || e.ID == "" || e.Attempt != 1 || e.End < e.Start || e.Start == 0 {
			t.Errorf("entry %+v", e)
		}
		got[string(e.Path)+" "+e.Phase] = e
	}
	want := map[string]string{"ok.txt check": "true", "ok.txt run": "ok", "skip.txt check": "false", "bad.txt check": "true", "bad.txt run": "error"}
	if len(got) != len(want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	for k, result := range want {
		if got[k].Result != result {
			t.Errorf("%s: result %q, want %q", k, got[k].Result, result)
		}
	}
	if got["bad.txt run"].Error != "boom" {
		t.Errorf("bad.txt run error %q, want boom", got["bad.txt run"].Error)
	}
}

func TestWrapWithoutRecordFileIsTheHandler(t *testing.T) {
	t.Parallel()
	h := sdk.HandlerFuncs{}
	if got := Wrap(h, func(string) string { return "" }); got == nil {
		t.Fatal("nil handler")
	} else if _, wrapped := got.(*recorder); wrapped {
		t.Fatal("wrapped without RECORD_FILE")
	}
}
