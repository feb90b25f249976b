package sdk

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/protocol"
)

// TestFailuresFailTheAttempt: an error or a panic in check or run is reported with
// protocol.DoneErrorField (and DonePermanentField for Permanent), the item is released, and
// the worker goes on with the next item.
func TestFailuresFailTheAttempt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		h         *handler
		reason    string
		permanent bool
	}{
		{"run error", &handler{run: func(context.Context, *Job) (Result, error) { return Result{}, errors.New("boom") }}, "boom", false},
		{"run panic", &handler{run: func(context.Context, *Job) (Result, error) { panic("kaput") }}, "panic: kaput", false},
		{"run permanent", &handler{run: func(context.Context, *Job) (Result, error) {
			return Result{}, Permanent(errors.New("unsupported format"))
		}}, "unsupported format", true},
		{"check error", &handler{check: func(context.Context, *Job) (bool, error) { return false, errors.New("cannot stat") }}, "cannot stat", false},
		{"check panic", &handler{check: func(context.Context, *Job) (bool, error) { panic("nil map") }}, "panic: nil map", false},
		{"check permanent", &handler{check: func(context.Context, *Job) (bool, error) { return false, Permanent(nil) }}, "permanent failure", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			bad, good := e.file("bad.txt", "x"), e.file("good.txt", "y")
			e.push("m:check", e.item(bad, "bad.txt", "uid-m", 1), e.item(good, "good.txt", "uid-m", 1))
			h := tc.h
			check, run := h.check, h.run
			h.check = func(ctx context.Context, job *Job) (bool, error) {
				if job.ID == good || check == nil {
					return true, nil
				}
				return check(ctx, job)
			}
			h.run = func(ctx context.Context, job *Job) (Result, error) {
				if job.ID == good || run == nil {
					return Result{Document: map[string]any{"ok": true}}, nil
				}
				return run(ctx, job)
			}
			e.serve(e.config("m"), h)
			seen := map[string]string{}
			for range 2 {
				raw := e.nextDone()
				_, info := mustDone(t, raw)
				seen[info.ID] = raw
			}
			want := `{"module":"m","document":{"id":"` + bad + `","uid":"uid-m","_hi_job":"abc123","_hi_attempt":1,"_hi_since":1700000000000},"_hi_error":"` + tc.reason + `"`
			if tc.permanent {
				want += `,"_hi_permanent":true`
			}
			if got := seen[bad]; got != want+"}" {
				t.Errorf("failure message\n got %s\nwant %s}", got, want)
			}
			if m, _ := mustDone(t, seen[good]); m.Error != "" || !strings.Contains(string(m.Document), `"ok":true`) {
				t.Errorf("the next item after a failure: %s", seen[good])
			}
			e.eventually("nothing held", func() bool {
				n, _ := e.rdb.ZCard(e.ctx, protocol.TimeoutsKey).Result()
				return n == 0 && e.llen("m:run:processing")+e.llen("m:check:processing") == 0
			})
		})
	}
}

// TestUnusableItemFailsPermanently: an item the worker can never process (no paths, a path
// leaving FILES_DIRECTORY, an id that cannot name a directory) is parked at once.
func TestUnusableItemFailsPermanently(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	items := []string{
		`{"id":"a1","paths":{},"uid":"uid-m","_hi_job":"ab","_hi_attempt":1,"_hi_since":1}`,
		`{"id":"a2","paths":{"../etc/passwd":1.0},"uid":"uid-m","_hi_job":"ab","_hi_attempt":1,"_hi_since":1}`,
		`{"id":"../a3","paths":{"a.txt":1.0},"uid":"uid-m","_hi_job":"ab","_hi_attempt":1,"_hi_since":1}`,
		`{"id":"a4","paths":{"a.txt":1.0},"size":"big","uid":"uid-m","_hi_job":"ab","_hi_attempt":1,"_hi_since":1}`,
	}
	e.push("m:check", items...)
	h := &handler{}
	e.serve(e.config("m"), h)
	for range items {
		raw := e.nextDone()
		if m, _ := mustDone(t, raw); m.Error == "" || !protocol.DonePermanent([]byte(raw)) {
			t.Errorf("done %s: want a permanent failure", raw)
		}
	}
	if len(h.spans()) != 0 {
		t.Errorf("Run was called for an unusable item")
	}
}
