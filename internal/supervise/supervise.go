// Package supervise runs a process's long-lived components as one group, in the manner of
// Prometheus's actor group: each component is a function that runs until its context ends.
//
// Shutdown order. When the group's context ends, or a component fails, the group stops its
// components one at a time in the reverse order of Add: the last one added is stopped first,
// and each is waited for before the next is stopped. So add a component after those it feeds
// (consumers first, producers last): intake stops before the work it hands on, and the
// component that persists results (the outbox, the lock) stops last. A component that returns
// nil before shutdown has merely finished; the others go on. The first error stops the group
// and is what Run returns, prefixed with the component's name.
package supervise

import (
	"context"
	"fmt"
	"time"
)

// Group is a set of components that start together and stop in a defined order. The zero
// value is ready to use; a Group runs once.
type Group struct {
	members []member
}

type member struct {
	name string
	run  func(ctx context.Context) error
	stop func() // nil: stopping cancels run's context
}

// Add registers a component. run must return soon after its context ends.
func (g *Group) Add(name string, run func(ctx context.Context) error) {
	g.members = append(g.members, member{name: name, run: run})
}

// AddServer registers a component that is stopped by a call rather than by its context (an
// HTTP server: serve blocks until stop makes it return). serve's error, if any, fails the
// group like a component's.
func (g *Group) AddServer(name string, serve func() error, stop func()) {
	g.members = append(g.members, member{name: name, run: func(context.Context) error { return serve() }, stop: stop})
}

// Run starts every component and blocks until ctx ends or a component fails; then it stops
// them in the reverse order of Add (see the package comment) and returns the first failure,
// or nil when ctx ended.
func (g *Group) Run(ctx context.Context) error {
	failed := make(chan error, len(g.members))
	type running struct {
		cancel context.CancelFunc
		done   chan struct{}
	}
	rs := make([]running, len(g.members))
	for i, m := range g.members {
		mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		rs[i] = running{cancel: cancel, done: done}
		go func() {
			defer close(done)
			if err := m.run(mctx); err != nil {
				failed <- fmt.Errorf("%s: %w", m.name, err)
			}
		}()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-failed:
	}
	for i := len(g.members) - 1; i >= 0; i-- {
		if g.members[i].stop != nil {
			g.members[i].stop()
		}
		rs[i].cancel()
		<-rs[i].done
	}
	return err
}

// Sleep waits d or until ctx ends, whichever comes first, and reports whether the whole d
// passed (false: ctx ended, the caller should return). Components use it for their retry and
// poll pauses so that every pause ends at shutdown.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
