package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/homeindex/homeindex/protocol"
)

// qsMaxPayload is the merger's payload cap (merge.DefaultMaxPayload: the daemon does not make
// it configurable) and qsMaxValues its value cap (merge.DefaultMaxValues).
const (
	qsMaxPayload = 16 << 20
	qsMaxValues  = 1 << 20
)

// Q5 and S7: a module (played by the test) answers a real job with results over the size cap,
// truncated JSON, invalid UTF-8, nesting 10,000 deep and a huge array (1.2M elements reduced:
// the value cap; 10M full: ~20 MB, the size cap). Each lands in modules:quarantine exactly
// once with its reason and one log line, nothing panics, the job's document is unchanged, the
// daemon's peak RSS grows by less than twice the cap, and the daemon merges the job's proper
// result afterwards.
func TestFaultQ5MalformedResultsQuarantined(t *testing.T) {
	t.Parallel()
	const mod = "evil"
	s := newStack(t, []module{{Name: mod, UID: "v1"}})
	s.write("a.txt", "q5 file a")
	s.write("archive/usb/b.txt", "q5 file b")
	s.Daemon.Start()
	rdb := s.Redis.Client()
	// Pushing a 100 MB result takes longer than go-redis's default 3 s on a loaded machine.
	big := redis.NewClient(&redis.Options{Addr: s.Redis.Addr(), MaxRetries: -1, ReadTimeout: 2 * time.Minute, WriteTimeout: 2 * time.Minute})
	t.Cleanup(func() { _ = big.Close() })
	h := hostile{t: t, rdb: big, module: mod}
	item := h.claim()
	info, err := protocol.ParseItem(item)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "the job's document on disk", func() error { _, err := s.doc(info.ID); return err })
	docBefore := string(s.qsRawDoc(info.ID))
	pid := qsPid(t, s.Daemon)
	baseHWM, baseRSS := qsMemKB(t, pid, "VmHWM"), qsMemKB(t, pid, "VmRSS")

	over := qsSize(qsMaxPayload+64<<10, 100<<20)
	arrayN := qsSize(qsMaxValues+qsMaxValues/5, 10_000_000)
	const depth = 10_000
	valid := qsResult(mod, item, `"note":"fine"`, `"some text"`)
	array := `"arr":[` + strings.Repeat("0,", arrayN-1) + `0]`
	arrayReason := fmt.Sprintf("more than %d JSON values", qsMaxValues)
	if len(array) > qsMaxPayload {
		arrayReason = "payload too large"
	}
	cases := []struct {
		name, payload, reason string
	}{
		{fmt.Sprintf("%d bytes", over+len(valid)), qsResult(mod, item, `"blob":"`+strings.Repeat("a", over)+`"`, ""), "payload too large"},
		{"truncated JSON", valid[:len(valid)/2], "truncated JSON"},
		{"invalid UTF-8", qsResult(mod, item, "\"note\":\"bad \xff\xfe bytes\"", ""), "invalid UTF-8"},
		{fmt.Sprintf("nesting %d deep", depth), qsResult(mod, item, `"deep":`+strings.Repeat("[", depth)+strings.Repeat("]", depth), ""), "nesting deeper than"},
		{fmt.Sprintf("array of %d elements (%d bytes)", arrayN, len(array)), qsResult(mod, item, array, ""), arrayReason},
	}
	started := time.Now()
	for _, c := range cases {
		h.push(c.payload)
	}
	waitUntil(t, 120*time.Second, "every malformed result handled", qsDoneEmpty(rdb))
	handled := time.Since(started)

	recs := qsQuarantine(t, rdb)
	if len(recs) != len(cases) {
		t.Fatalf("%d quarantine records, want %d", len(recs), len(cases))
	}
	for _, c := range cases {
		want := qsJSONString(t, c.payload) // the record is JSON: invalid bytes read back as U+FFFD
		found := 0
		for _, r := range recs {
			if r.Payload == want {
				found++
				if !strings.Contains(r.Reason, c.reason) {
					t.Errorf("%s: reason %q, want it to mention %q", c.name, r.Reason, c.reason)
				}
			}
		}
		if found != 1 {
			t.Errorf("%s: quarantined %d times, want once", c.name, found)
		}
	}
	// The daemon logs a quarantine just after Redis has it: wait for the last line.
	var logged []map[string]any
	waitUntil(t, 10*time.Second, "a log line per quarantined result", func() error {
		if logged = qsLogged(s.Daemon, "result quarantined"); len(logged) != len(cases) {
			return fmt.Errorf("%d \"result quarantined\" log lines, want %d", len(logged), len(cases))
		}
		return nil
	})
	for _, l := range logged {
		if r, _ := l["reason"].(string); r == "" {
			t.Errorf("log line without a reason: %v", l)
		}
	}
	if !s.Daemon.Running() || strings.Contains(s.Daemon.Log(), "panic") {
		t.Fatal("homeindexd died or panicked")
	}
	if got := string(s.qsRawDoc(info.ID)); got != docBefore {
		t.Fatalf("document changed by malformed results:\n%s\n→\n%s", docBefore, got)
	}
	hwm, rss := qsMemKB(t, pid, "VmHWM"), qsMemKB(t, pid, "VmRSS")
	largest := max(over, len(array))
	t.Logf("Q5: %d malformed results (largest %d bytes) quarantined in %v; daemon VmHWM %d → %d kB (+%d kB, %.1f× the largest payload), VmRSS %d → %d kB (race detector: %v)",
		len(cases), largest, handled.Round(time.Millisecond), baseHWM, hwm, hwm-baseHWM, float64((hwm-baseHWM)<<10)/float64(largest), baseRSS, rss, raceEnabled)
	// Bounded by the cap, not by what a module sends (fault Q5: the daemon's RSS
	// grows by less than 2 × cap × concurrency; the merger handles one result at a time). The
	// race detector's shadow memory multiplies every allocation, hence its factor.
	limit := int64(2*qsMaxPayload) >> 10
	if raceEnabled {
		limit *= 4
	}
	if hwm-baseHWM > limit {
		t.Errorf("daemon peak RSS grew by %d kB handling results of at most %d bytes, want under %d kB (2 × the %d-byte cap)", hwm-baseHWM, largest, limit, qsMaxPayload)
	}

	// The daemon goes on: the job's proper result merges.
	h.push(qsResult(mod, item, `"note":"fine"`, `"some text"`))
	waitUntil(t, 60*time.Second, "the proper result merged", s.docsDone([]string{info.ID}, func(d protocol.Document) error {
		if field(d, "note") != "fine" {
			return fmt.Errorf("note %q", field(d, "note"))
		}
		return nil
	}))
}

// qsJSONString is s as a JSON string reads back (invalid UTF-8 bytes become U+FFFD).
func qsJSONString(t testing.TB, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
