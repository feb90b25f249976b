// Package wait replaces sleeps in tests: it polls a condition until it holds, and waits for a
// Run goroutine to return, each within a deadline that fails the test.
package wait

import (
	"testing"
	"time"
)

// Timeout bounds every wait.
const Timeout = 10 * time.Second

// every is the polling period.
const every = 5 * time.Millisecond

// For polls cond until it holds; the test fails when Timeout passes first.
func For(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(Timeout)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// Returned waits for the result of a Run whose context was cancelled; the test fails when
// Run returns an error or does not return within Timeout.
func Returned(tb testing.TB, what string, done <-chan error) {
	tb.Helper()
	select {
	case err := <-done:
		if err != nil {
			tb.Fatalf("%s returned %v", what, err)
		}
	case <-time.After(Timeout):
		tb.Fatalf("%s did not return after its context ended", what)
	}
}
