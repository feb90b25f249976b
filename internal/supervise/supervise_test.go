package supervise_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/supervise"
)

// order records the order components stop in.
type order struct {
	mu    sync.Mutex
	names []string
}

func (o *order) add(name string) {
	o.mu.Lock()
	o.names = append(o.names, name)
	o.mu.Unlock()
}

func (o *order) got() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.names)
}

// untilDone is a component that records when its context ends; it checks that the one added
// after it has already returned (each is waited for before the next is stopped).
func untilDone(o *order, name string, started *sync.WaitGroup) func(context.Context) error {
	started.Add(1)
	return func(ctx context.Context) error {
		started.Done()
		<-ctx.Done()
		o.add(name)
		return nil
	}
}

// The group stops its components in the reverse order of Add, each after the previous one
// returned, and Run returns nil when its context ends.
func TestStopsInReverseOrder(t *testing.T) {
	t.Parallel()
	var o order
	var started sync.WaitGroup
	var g supervise.Group
	g.Add("outbox", untilDone(&o, "outbox", &started))
	g.Add("pipeline", untilDone(&o, "pipeline", &started))
	stopped := make(chan struct{})
	g.AddServer("http", func() error { <-stopped; o.add("http"); return nil }, func() { close(stopped) })
	g.Add("scheduler", untilDone(&o, "scheduler", &started))
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- g.Run(ctx) }()
	started.Wait()
	cancel()
	select {
	case err := <-res:
		if err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if want := []string{"scheduler", "http", "pipeline", "outbox"}; !slices.Equal(o.got(), want) {
		t.Fatalf("stop order %v, want %v", o.got(), want)
	}
}

// A failing component stops the group; Run returns its error, named; a component that
// returns nil early does not.
func TestFailureStopsTheGroup(t *testing.T) {
	t.Parallel()
	var o order
	var started sync.WaitGroup
	var g supervise.Group
	boom := errors.New("boom")
	fail := make(chan struct{})
	g.Add("early", func(context.Context) error { return nil })
	g.Add("steady", untilDone(&o, "steady", &started))
	g.Add("failing", func(context.Context) error { <-fail; return boom })
	res := make(chan error, 1)
	go func() { res <- g.Run(context.Background()) }()
	started.Wait()
	close(fail)
	select {
	case err := <-res:
		if !errors.Is(err, boom) || err.Error() != "failing: boom" {
			t.Fatalf("Run = %v, want failing: boom", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after a component failed")
	}
	if want := []string{"steady"}; !slices.Equal(o.got(), want) {
		t.Fatalf("stopped %v, want %v", o.got(), want)
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	if !supervise.Sleep(context.Background(), time.Millisecond) {
		t.Fatal("Sleep on a live context reported it ended")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if supervise.Sleep(ctx, time.Hour) {
		t.Fatal("Sleep on an ended context reported the whole pause passed")
	}
}
