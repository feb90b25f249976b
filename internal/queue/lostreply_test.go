package queue

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
	"github.com/rs/zerolog"
)

// replyCutter relays TCP between clients and a redis-server. Once armed, it passes the next
// script call on and, when the server has answered it, closes that connection instead of
// passing the answer back: Redis ran the script and the client never hears of it, as when
// Redis dies between running a script and sending its reply (the append-only fsync lies in
// that window).
type replyCutter struct {
	ln     net.Listener
	target string
	armed  atomic.Bool
	cuts   atomic.Int64
	wg     sync.WaitGroup
}

func newReplyCutter(t *testing.T, target string) *replyCutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc := &replyCutter{ln: ln, target: target}
	rc.wg.Add(1)
	go rc.accept()
	t.Cleanup(func() { ln.Close(); rc.wg.Wait() })
	return rc
}

func (rc *replyCutter) addr() string { return rc.ln.Addr().String() }

func (rc *replyCutter) accept() {
	defer rc.wg.Done()
	for {
		client, err := rc.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", rc.target)
		if err != nil {
			client.Close()
			continue
		}
		var cutting atomic.Bool
		rc.wg.Add(2)
		go rc.relay(client, server, func(b []byte) bool {
			if bytes.Contains(bytes.ToLower(b), []byte("evalsha")) && rc.armed.CompareAndSwap(true, false) {
				cutting.Store(true)
			}
			return false
		})
		go rc.relay(server, client, func([]byte) bool { // the answer to the request being cut
			if cutting.Load() {
				rc.cuts.Add(1)
				return true
			}
			return false
		})
	}
}

// relay copies from src to dst until either side closes, or until drop, shown each chunk
// read, says to drop it; then it closes both.
func (rc *replyCutter) relay(src, dst net.Conn, drop func([]byte) bool) {
	defer rc.wg.Done()
	defer func() { src.Close(); dst.Close() }()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if drop(buf[:n]) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// A take that Redis ran but whose reply was lost must fail, not be run again behind the
// merger's back: a second run would take the next results and report only those, leaving
// the first run's in modules:done:processing, where nothing looks for them while the merger
// believes it saw everything. Failing, the merger restores them (merge.Run).
func TestTakeWhoseReplyIsLostFails(t *testing.T) {
	srv := redistest.Start(t)
	rc := newReplyCutter(t, srv.Addr())
	ctx := t.Context()
	c, err := Connect(ctx, Options{Endpoint: redisconn.Endpoint{Addr: rc.addr()}, DialTimeout: time.Second}, zerolog.New(zerolog.NewTestWriter(t)))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	rdb := srv.Client()
	if err := rdb.RPush(ctx, protocol.DoneKey, "r1", "r2").Err(); err != nil {
		t.Fatal(err)
	}

	rc.armed.Store(true)
	taken, err := c.NextDones(ctx, time.Second, 1, 1<<20)
	if rc.cuts.Load() != 1 {
		t.Fatalf("%d replies cut, want 1", rc.cuts.Load())
	}
	if err == nil {
		t.Fatalf("a take whose reply was lost reported %q and no error", taken.Results)
	}
	if got := rdb.LRange(ctx, protocol.DoneProcessingKey, 0, -1).Val(); len(got) != 1 || got[0] != "r1" {
		t.Fatalf("%s holds %q, want the lost take's r1", protocol.DoneProcessingKey, got)
	}

	if n, err := c.RestoreDone(ctx); err != nil || n != 1 {
		t.Fatalf("restore: %d, %v", n, err)
	}
	taken, err = c.NextDones(ctx, time.Second, 2, 1<<20)
	if err != nil || len(taken.Results) != 2 || taken.Results[0] != "r1" || taken.Results[1] != "r2" {
		t.Fatalf("after the restore took %q, %v; want r1 then r2", taken.Results, err)
	}
}
