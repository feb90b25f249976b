package scanner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cespare/xxhash/v2"
)

func TestHasherHashesEveryJob(t *testing.T) {
	dir := t.TempDir()
	const n = 300
	want := map[int]string{}
	for i := range n {
		content := fmt.Sprintf("file %d %s", i, make([]byte, i*97))
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		want[i] = formatID(xxhash.Sum64String(content))
	}

	jobs := make(chan HashJob)
	out := make(chan HashResult)
	go Hasher{Workers: 4}.Run(t.Context(), jobs, out)
	go func() {
		defer close(jobs)
		for i := range n {
			jobs <- HashJob{Path: filepath.Join(dir, fmt.Sprint(i)), Ref: i}
		}
		jobs <- HashJob{Path: filepath.Join(dir, "missing"), Ref: -1}
	}()

	got := map[int]string{}
	var missingErr error
	for r := range out {
		i := r.Job.Ref.(int)
		if i == -1 {
			missingErr = r.Err
			continue
		}
		if r.Err != nil {
			t.Errorf("job %d: %v", i, r.Err)
		}
		if _, dup := got[i]; dup {
			t.Errorf("job %d: two results", i)
		}
		got[i] = r.ID
	}
	if !errors.Is(missingErr, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", missingErr)
	}
	if len(got) != n {
		t.Fatalf("%d results, want %d", len(got), n)
	}
	for i, id := range want {
		if got[i] != id {
			t.Errorf("job %d: id %s, want %s", i, got[i], id)
		}
	}
}

func TestHasherStopsOnCancel(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f": "x"})
	ctx, cancel := context.WithCancel(t.Context())
	jobs := make(chan HashJob) // never closed: only cancellation can end Run
	out := make(chan HashResult)
	go Hasher{Workers: 2}.Run(ctx, jobs, out)

	jobs <- HashJob{Path: filepath.Join(dir, "f")}
	if r := <-out; r.Err != nil || r.ID != formatID(xxhash.Sum64String("x")) {
		t.Fatalf("first result = %+v", r)
	}
	jobs <- HashJob{Path: filepath.Join(dir, "f")} // in flight when canceled
	cancel()
	for r := range out { // Run must close out although jobs stays open and out is unread
		if r.Err != nil {
			t.Errorf("result after cancel carries error %v; want none sent or a complete one", r.Err)
		}
	}
}

func TestHasherCanceledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	jobs := make(chan HashJob, 1)
	jobs <- HashJob{Path: "/nonexistent"}
	out := make(chan HashResult, 1)
	Hasher{}.Run(ctx, jobs, out) // returns: does not wait for jobs to close
	if _, ok := <-out; ok {
		t.Error("result sent after cancellation")
	}
	if len(jobs) != 1 {
		t.Error("job taken after cancellation")
	}
}

// A job with Detect gets the type DetectType gives its file, from the bytes it hashed; one
// without gets none.
func TestHasherDetectsAsDetectType(t *testing.T) {
	dir := t.TempDir()
	want := map[string]string{}
	for _, c := range detectCases {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.content, 0o644); err != nil {
			t.Fatal(err)
		}
		want[p] = c.want
	}
	jobs := make(chan HashJob)
	out := make(chan HashResult)
	go Hasher{Workers: 2}.Run(t.Context(), jobs, out)
	go func() {
		defer close(jobs)
		for p := range want {
			jobs <- HashJob{Path: p, Detect: true}
			jobs <- HashJob{Path: p}
		}
	}()
	n := 0
	for r := range out {
		n++
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Job.Path, r.Err)
		}
		if !r.Job.Detect {
			if r.Type != "" {
				t.Errorf("%s without Detect: type %q", filepath.Base(r.Job.Path), r.Type)
			}
			continue
		}
		direct, err := DetectType(r.Job.Path)
		if err != nil {
			t.Fatal(err)
		}
		if r.Type != direct || r.Type != want[r.Job.Path] {
			t.Errorf("%s: hasher type %q, DetectType %q, want %q", filepath.Base(r.Job.Path), r.Type, direct, want[r.Job.Path])
		}
	}
	if n != 2*len(want) {
		t.Fatalf("%d results, want %d", n, 2*len(want))
	}
}
