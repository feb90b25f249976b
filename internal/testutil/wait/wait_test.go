package wait

import (
	"errors"
	"sync/atomic"
	"testing"
)

// fakeTB records a Fatalf instead of ending the test, to check that a wait fails.
type fakeTB struct {
	testing.TB
	failed atomic.Bool
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(string, ...any) { f.failed.Store(true) }

func TestFor(t *testing.T) {
	t.Parallel()
	n := 0
	For(t, "the third poll", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("polled %d times, want 3", n)
	}
}

func TestReturned(t *testing.T) {
	t.Parallel()
	done := make(chan error, 1)
	done <- nil
	Returned(t, "run", done)
	f := &fakeTB{TB: t}
	done <- errors.New("boom")
	Returned(f, "run", done)
	if !f.failed.Load() {
		t.Fatal("an error from Run did not fail the test")
	}
}
