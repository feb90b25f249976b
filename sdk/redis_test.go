package sdk

import "testing"

// TestRedisOutage: the worker logs an outage once, waits it out, and serves again after
// Redis comes back (empty, so its scripts must be sent again).
func TestRedisOutage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.serve(e.config("m"), &handler{})
	e.push("m:check", e.item(e.file("a.txt", "a"), "a.txt", "uid-m", 1))
	e.nextDone()
	e.srv.Kill()
	e.eventually("the outage logged", func() bool { return e.logs.count("redis unavailable") == 1 })
	e.srv.Restart()
	e.push("m:check", e.item(e.file("b.txt", "b"), "b.txt", "uid-m", 1))
	e.nextDone()
	e.eventually("the recovery logged", func() bool { return e.logs.count("redis reachable again") == 1 })
	if n := e.logs.count("redis unavailable"); n != 1 {
		t.Errorf("%d outage lines, want 1", n)
	}
}
