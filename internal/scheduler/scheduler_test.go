package scheduler

import (
	"context"
	"os"
	"path/filepath"
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

func TestFileEventTriggersEarlySync(t *testing.T) {
	dir := t.TempDir()
	r := newRecorder()
	yearly, _ := cron.ParseStandard("0 0 1 1 *")
	s := New(yearly, r.sync, zerolog.Nop())
	s.MinEarlyGap = 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	watching := make(chan struct{})
	go func() {
		close(watching)
		_ = Watch(ctx, s, zerolog.Nop(), dir, filepath.Join(dir, "missing"))
	}()
	<-watching
	waitReason(t, r, "startup")
	// The watcher starts asynchronously: keep creating files until one is seen.
	deadline := time.After(10 * time.Second)
	for i := 0; ; i++ {
		os.WriteFile(filepath.Join(dir, "new-"+string(rune('a'+i%26))), []byte("x"), 0o644)
		select {
		case got := <-r.started:
			if got != "file event" {
				t.Fatalf("reason %q", got)
			}
			return
		case <-deadline:
			t.Fatal("no early sync after a file event")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func TestMarkerWritesDoNotTriggerSyncs(t *testing.T) {
	dir := t.TempDir()
	r := newRecorder()
	yearly, _ := cron.ParseStandard("0 0 1 1 *")
	s := New(yearly, r.sync, zerolog.Nop())
	s.MinEarlyGap = 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	go func() { _ = Watch(ctx, s, zerolog.Nop(), dir) }()
	waitReason(t, r, "startup")
	// Prove the watcher is live first (it starts asynchronously), so the marker check below
	// cannot pass merely because nobody was watching yet.
	deadline := time.After(10 * time.Second)
	for live := false; !live; {
		os.WriteFile(filepath.Join(dir, "real.txt"), []byte("x"), 0o644)
		select {
		case got := <-r.started:
			if got != "file event" {
				t.Fatalf("reason %q", got)
			}
			live = true
		case <-deadline:
			t.Fatal("no sync for a real file")
		case <-time.After(100 * time.Millisecond):
		}
	}
	// Let syncs for the repeated real.txt writes settle: quiet for 500 ms.
	for quiet := false; !quiet; {
		select {
		case <-r.started:
		case <-time.After(500 * time.Millisecond):
			quiet = true
		}
	}
	for i := 0; i < 20; i++ {
		os.WriteFile(filepath.Join(dir, "drive1-status-ready"), []byte("x"), 0o644)
		os.WriteFile(filepath.Join(dir, "drive1-status-pending"), []byte("x"), 0o644)
	}
	select { // bounded observation: marker writes alone start nothing
	case got := <-r.started:
		t.Fatalf("marker writes started a sync (%q)", got)
	case <-time.After(time.Second):
	}
	// A real file still does: one write, the watcher is known to be live.
	os.WriteFile(filepath.Join(dir, "other.txt"), []byte("x"), 0o644)
	waitReason(t, r, "file event")
}
