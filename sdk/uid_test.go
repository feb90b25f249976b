package sdk

import (
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// TestUIDMismatch (scenario 11): an item carrying another uid is logged ("uid mismatch") and
// set aside in its processing list with a deadline UID_RETRY_SECONDS away, so the item
// behind it is processed at once (no head-of-line blocking); when a reaper offers it again, it
// is set aside again. It is never run.
func TestUIDMismatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	badID, goodID := e.file("hello.txt", "hi"), e.file("other.txt", "yo")
	bad := pyItem(badID, "hello.txt", "bad")
	h := &handler{}
	cfg := e.config("m")
	cfg.UIDRetry = 700 * time.Millisecond
	e.push("m:run", bad, pyItem(goodID, "other.txt", "uid-m"))
	e.serve(cfg, h)
	if _, info := mustDone(t, e.nextDone()); info.ID != goodID {
		t.Fatalf("first answer for %s, want the good item %s", info.ID, goodID)
	}
	if n := e.logs.count(`"level":"warn"`, "uid mismatch", badID); n != 1 {
		t.Errorf("%d uid mismatch warnings, want 1", n)
	}
	member := protocol.TimeoutMember("m:run", bad)
	score, err := e.rdb.ZScore(e.ctx, protocol.TimeoutsKey, member).Result()
	if err != nil {
		t.Fatalf("set-aside item has no deadline: %v", err)
	}
	if now := e.now(); score < now || score > now+0.7 {
		t.Errorf("set-aside deadline %f, want within UID_RETRY_SECONDS of %f", score, now)
	}
	if got := e.lrange("m:run:processing"); len(got) != 1 || got[0] != bad || e.llen("m:run") != 0 {
		t.Errorf("m:run:processing = %q, m:run has %d; want the bad item held aside", got, e.llen("m:run"))
	}
	e.eventually("the set-aside deadline to pass", func() bool { return e.now() > score })
	if n := e.reapExpired(); n != 1 {
		t.Fatalf("reaper found %d expired members, want 1", n)
	}
	e.eventually("a second uid mismatch", func() bool { return e.logs.count("uid mismatch", badID) == 2 })
	for _, s := range h.spans() {
		if s.id == badID {
			t.Errorf("the item with another uid was run")
		}
	}
	if n := e.llen(protocol.DoneKey); n != 0 {
		t.Errorf("%d extra done messages", n)
	}
}
