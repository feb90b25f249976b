package e2e

import (
	"testing"
	"time"
)

// pollEvery is how often waitUntil re-evaluates its condition.
const pollEvery = 20 * time.Millisecond

// waitUntil polls cond until it returns nil, failing the test with cond's last answer when d
// passes first. It is the suite's only way to wait: deadlines bound failures, never success.
func waitUntil(t testing.TB, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; last state: %v", d, what, err)
		}
		time.Sleep(pollEvery) // a poll interval, not a synchronisation
	}
}
