package sdk

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
)

// TestTimeoutMemberLua checks that the member claimScript writes is protocol.TimeoutMember
// byte for byte (which matches CPython's json.dumps), for ASCII, control characters,
// multi-byte runes and invalid UTF-8.
func TestTimeoutMemberLua(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	member := redis.NewScript(luaTimeoutMember + `return timeout_member(ARGV[1], ARGV[2])`)
	cases := []string{
		"", `{"id":"0123456789abcdef","paths":{"a b/c.txt":1.5},"uid":"u1","_hi_job":"ab","_hi_attempt":1,"_hi_since":5}`,
		`{"id": "x", "paths": {"caf\u00e9.txt": 1.0}, "uid": "u"}`,
		"raw é \u007f \n\r\t\b\f \u0001 😀 \"\\", "\x00\x1f~ ", "中文 \u2028 \ufffd",
		"\xff", "\xc3", "\xe2\x82A", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80", "\xc3\xa9\xa9", "\x80\x80", "\xe1\x80\x80\x80",
	}
	pieces := []string{"a", "Z", "0", " ", "~", "\"", "\\", "/", "\x00", "\x07", "\x1b", "\x7f", "\n", "é", "ß", "中", "😀", "\U0010FFFF", "\xff", "\xc3", "\x80", "\xe2\x82"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, from := range [][]string{pieces, pieces[:12]} { // all pieces; ASCII only (cjson's fast path)
		for range 300 {
			var b strings.Builder
			for range rng.IntN(40) {
				b.WriteString(from[rng.IntN(len(from))])
			}
			cases = append(cases, b.String())
		}
	}
	for c := range 128 { // every ASCII byte, alone and between others
		cases = append(cases, string(rune(c)), "a/"+string(rune(c))+`\/`)
	}
	for _, d := range cases {
		got, err := member.Run(e.ctx, e.rdb, nil, "m:run", d).Text()
		if err != nil {
			t.Fatalf("timeout_member(%q): %v", d, err)
		}
		if want := protocol.TimeoutMember("m:run", d); got != want {
			t.Errorf("timeout_member(%q)\n got %s\nwant %s", d, got, want)
		}
	}
}

// TestClaimIsAtomic checks that a claimed item is in the processing list with its deadline
// (Redis clock + TIMEOUT) after one script call, and that an empty queue returns nothing.
func TestClaimIsAtomic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w, err := NewWorker(e.config("m"), &handler{})
	if err != nil {
		t.Fatal(err)
	}
	item := e.item("0123456789abcdef", "a.txt", "uid-m", 1)
	e.push("m:check", item)
	before := e.now()
	l, st, err := w.claim(e.ctx, true)
	after := e.now()
	if err != nil || st != claimed || l.item != item {
		t.Fatalf("claim = %+v, %v, %v", l, st, err)
	}
	if got := e.lrange("m:check:processing"); len(got) != 1 || got[0] != item {
		t.Errorf("m:check:processing = %q, want the item", got)
	}
	if n := e.llen("m:check"); n != 0 {
		t.Errorf("m:check has %d items, want 0", n)
	}
	score, err := e.rdb.ZScore(e.ctx, protocol.TimeoutsKey, protocol.TimeoutMember("m:check", item)).Result()
	if err != nil {
		t.Fatalf("timeouts member: %v", err)
	}
	if score < before+5 || score > after+5 {
		t.Errorf("deadline %f, want Redis time + 5 s in [%f, %f]", score, before+5, after+5)
	}
	if _, st, err := w.claim(e.ctx, true); err != nil || st != claimEmpty {
		t.Errorf("claim on an empty queue = %v, %v; want claimEmpty", st, err)
	}
}
