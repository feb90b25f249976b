package scheduler

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/rs/zerolog"
)

// recorder is a SyncFunc that records each sync's reason and can hold a sync open.
type recorder struct {
	mu      sync.Mutex
	reasons []string
	running int
	overlap bool
	hold    chan struct{} // when non-nil, each sync waits for a value
	started chan string
}

func newRecorder() *recorder { return &recorder{started: make(chan string, 100)} }

func (r *recorder) sync(ctx context.Context, reason string) error {
	r.mu.Lock()
	r.running++
	if r.running > 1 {
		r.overlap = true
	}
	r.reasons = append(r.reasons, reason)
	hold := r.hold
	r.mu.Unlock()
	r.started <- reason
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
		}
	}
	r.mu.Lock()
	r.running--
	r.mu.Unlock()
	return nil
}

func waitReason(t *testing.T, r *recorder, want string) {
	t.Helper()
	select {
	case got := <-r.started:
		if got != want {
			t.Fatalf("sync reason %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no %q sync", want)
	}
}

func everySecond(t *testing.T) cron.Schedule {
	s, err := cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow).Parse("* * * * * *")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStartupSyncThenCronTicks(t *testing.T) {
	r := newRecorder()
	s := New(everySecond(t), r.sync, zerolog.Nop())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	waitReason(t, r, "startup")
	waitReason(t, r, "cron")
	waitReason(t, r, "cron")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestTickDuringSyncIsSkipped(t *testing.T) {
	r := newRecorder()
	r.hold = make(chan struct{})
	s := New(everySecond(t), r.sync, zerolog.Nop())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	waitReason(t, r, "startup")
	deadline := time.After(10 * time.Second)
	for s.Skipped() < 2 { // the held start-up sync makes ticks skip
		select {
		case <-deadline:
			t.Fatal("no tick skipped while a sync ran")
		case <-time.After(20 * time.Millisecond):
		}
	}
	close(r.hold)
	waitReason(t, r, "cron") // after it ends, ticks sync again
	cancel()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.overlap {
		t.Fatal("two syncs ran at once")
	}
}

// A change reported while a sync runs starts another sync after it: the running walk may
// have passed the changed directory already.
func TestTriggerDuringSyncRunsAnotherAfterIt(t *testing.T) {
	r := newRecorder()
	r.hold = make(chan struct{})
	yearly, _ := cron.ParseStandard("0 0 1 1 *")
	s := New(yearly, r.sync, zerolog.Nop())
	s.MinEarlyGap = 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	waitReason(t, r, "startup")
	s.Trigger("file changes (3)")
	r.hold <- struct{}{} // the start-up sync ends; the trigger came while it ran
	waitReason(t, r, "file changes (3)")
	r.hold <- struct{}{}
	cancel()
	<-done
}

// Request starts a sync at once, or after the running one, and returns that sync's result.
func TestRequestWaitsForItsOwnSync(t *testing.T) {
	r := newRecorder()
	r.hold = make(chan struct{})
	yearly, _ := cron.ParseStandard("0 0 1 1 *")
	s := New(yearly, r.sync, zerolog.Nop())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	waitReason(t, r, "startup")
	answered := make(chan error, 1)
	go func() { answered <- s.Request(ctx, "api") }()
	select { // bounded observation: the running start-up sync does not answer the request
	case err := <-answered:
		t.Fatalf("request answered by the sync already running (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	r.hold <- struct{}{}
	waitReason(t, r, "api")
	r.hold <- struct{}{}
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("request not answered")
	}
	// A request that ctx abandons returns ctx's error.
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	close(r.hold)
	if err := s.Request(short, "api"); err != nil && err != context.DeadlineExceeded {
		t.Fatalf("abandoned request: %v", err)
	}
}
