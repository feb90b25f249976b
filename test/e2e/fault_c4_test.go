package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// C4 (docs/invariants.md, fault catalogue): homeindexd dies after the catalog commit of results and before their
// LREM from modules:done:processing. The replay at the next start changes nothing: every
// document.json (and the module's content.json and chunks.json) keeps its bytes and is not
// even rewritten (same modification time), each result counts as merged once, nothing is
// dropped as stale or quarantined, and Redis ends empty.
//
// The crash state is rebuilt exactly, without a hook in the daemon: real results are taken
// from modules:done (the module ran while the daemon was stopped), merged by the daemon, and
// then put back where a crash between the commit and the acknowledgement leaves them: the raw
// results in modules:done:processing and their jobs' in-flight entries in homeindex:<m>:jobs
// (the acknowledgement script, queue.AckDone, removes exactly these two things).
//
// Full: 100 results replayed. Reduced: 10.
func TestFaultC4CrashBetweenCommitAndAck(t *testing.T) {
	t.Parallel()
	const mod = "example-module"
	n := faultSize(10, 100)
	r := newFaultRun(t, n, n, []module{{Name: mod, UID: "e1"}})
	ctx, rdb := context.Background(), r.Redis.Client()

	// Every job dispatched; the daemon stops; the module answers them all.
	r.Daemon.Start()
	waitUntil(t, 60*time.Second, "every job dispatched", func() error {
		q, err := r.queuedIDs(mod)
		if err != nil || len(q) != n {
			return fmt.Errorf("%d queued (%v)", len(q), err)
		}
		return nil
	})
	r.Daemon.Stop()
	worker := r.startModule("example", bin.example, mod)
	waitUntil(t, 60*time.Second, "every result in modules:done", func() error {
		if got, err := rdb.LLen(ctx, protocol.DoneKey).Result(); err != nil || got != int64(n) {
			return fmt.Errorf("%d results (%v)", got, err)
		}
		return nil
	})
	worker.Stop()
	results, err := rdb.LRange(ctx, protocol.DoneKey, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	inFlight, err := rdb.HGetAll(ctx, protocol.JobsKey(mod)).Result()
	if err != nil || len(inFlight) != n {
		t.Fatalf("%d in-flight entries (%v), want %d", len(inFlight), err, n)
	}

	// The daemon merges them and writes everything out.
	r.Daemon.Start()
	r.waitComplete(2 * time.Minute)
	r.Daemon.Stop()
	r.assertNothingStranded()
	type snap struct {
		data  []byte
		mtime time.Time
	}
	snapshot := func() map[string]snap {
		out := map[string]snap{}
		for _, id := range r.ids {
			for _, rel := range []string{"document.json", mod + "/content.json", mod + "/chunks.json"} {
				p := filepath.Join(r.Meta, "by-id", id, filepath.FromSlash(rel))
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				st, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				out[p] = snap{b, st.ModTime()}
			}
		}
		return out
	}
	before := snapshot()

	// The crash state: results committed, not acknowledged.
	if err := rdb.RPush(ctx, protocol.DoneProcessingKey, toAny(results)...).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, protocol.JobsKey(mod), inFlight).Err(); err != nil {
		t.Fatal(err)
	}
	r.Daemon.Start()
	replayed := []string{`"message":"result replayed: already merged"`}
	waitUntil(t, 60*time.Second, "every result replayed and released", func() error {
		if got := logLines(r.Daemon.LogSinceStart(), replayed...); got != n {
			return fmt.Errorf("%d replays logged", got)
		}
		if left := r.stranded(); len(left) > 0 {
			return fmt.Errorf("left in Redis: %v", left)
		}
		return r.complete()
	})
	if got := logLines(r.Daemon.LogSinceStart(), `"message":"unacknowledged results put back for replay"`, fmt.Sprintf(`"results":%d`, n)); got != 1 {
		t.Fatalf("want one log line putting back the %d unacknowledged results", n)
	}
	for _, bad := range []string{`"message":"stale result dropped"`, `"message":"result quarantined"`} {
		if got := logLines(r.Daemon.LogSinceStart(), bad); got != 0 {
			t.Fatalf("%d lines %s after the replay", got, bad)
		}
	}
	checked := r.assertNoLossNoDoubleMerge()
	r.assertAgree()
	after := snapshot()
	for p, b := range before {
		a := after[p]
		if !bytes.Equal(a.data, b.data) {
			t.Fatalf("%s changed by the replay:\n%s\nwas:\n%s", p, a.data, b.data)
		}
		if !a.mtime.Equal(b.mtime) {
			t.Fatalf("%s rewritten by the replay (modified %v, was %v)", p, a.mtime, b.mtime)
		}
	}
	t.Logf("C4: %d results replayed after a crash between commit and acknowledgement: %d files byte-identical and untouched, %d/%d merged once",
		n, len(before), checked, n)
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
