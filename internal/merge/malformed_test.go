package merge

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/protocol"
)

// Every malformed payload is quarantined once, with its reason and exactly as received; the
// document is untouched and the merger goes on.
func TestMalformedPayloadsQuarantined(t *testing.T) {
	f := newFixture(t, Config{})
	f.addDoc(docA, "a.txt", "", "m1")
	item := f.dispatch(docA, "m1")
	good := result("m1", item, `"title":"x"`, `"words"`)
	deep := strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000)
	cases := []struct {
		name, payload, reason string
	}{
		{"over the size cap", withFields(good, `"pad":"`+strings.Repeat("x", DefaultMaxPayload)+`"`), "payload too large"},
		{"10M-element array, over the size cap", withFields(good, `"a":[`+strings.Repeat("0,", 10_000_000)+`0]`), "payload too large"},
		{"truncated", good[:len(good)/2], "truncated JSON"},
		{"truncated literal", `{"module":"m1","document":{"a":tru`, "truncated JSON"},
		{"invalid UTF-8", withFields(good, `"t":"a`+"\xff\xfe"+`b"`), "invalid UTF-8"},
		{"nesting 10k deep", withFields(good, `"deep":`+deep), "nesting deeper than 64"},
		{"duplicate envelope key", `{"module":"m1","module":"m2",` + good[1:], `duplicate key "module"`},
		{"duplicate id", `{"module":"m1","document":{"id":"` + docA + `",` + item[1:] + `}`, `duplicate key "id"`},
		{"duplicate id through an escape", `{"module":"m1","document":{"\u0069d":"` + docA + `",` + item[1:] + `}`, `duplicate key "id"`},
		{"duplicate nested key", withFields(good, `"o":{"k":1,"k":2}`), `duplicate key "k"`},
		{"not an object", `["m1"]`, "want a JSON object"},
		{"empty", ``, "empty payload"},
		{"trailing data", good + ` {}`, "data after the JSON object"},
		{"control character", withFields(good, `"t":"a`+"\x01"+`"`), "control character"},
		{"bad literal", withFields(good, `"t":nul`), "invalid JSON"},
		{"bad number", withFields(good, `"t":01`), "invalid JSON"},
		{"no module", `{"document":` + item + `}`, "no module"},
		{"module not a string", `{"module":5,"document":` + item + `}`, "module"},
		{"document not an object", `{"module":"m1","document":[1]}`, "document is not a JSON object"},
		{"document null", `{"module":"m1","document":null}`, "document is not a JSON object"},
		{"id not a string", `{"module":"m1","document":{"id":5}}`, "document"},
		{"no id", `{"module":"m1","document":{"title":"x"}}`, "no id"},
		{"job fields of the wrong type", `{"module":"m1","document":{"id":"` + docA + `","_hi_job":"ab","_hi_attempt":"1","_hi_since":1}}`, "_hi_attempt"},
	}
	for i, tc := range cases {
		f.pushDone(tc.payload)
		f.mustHandleNext()
		if n := f.llen(protocol.QuarantineKey); n != int64(i+1) {
			t.Fatalf("%s: %d quarantine records, want %d", tc.name, n, i+1)
		}
		rec := f.lastQuarantined()
		// JSON cannot hold invalid UTF-8: the record keeps each bad byte as U+FFFD.
		if want := jsonRoundTrip(t, tc.payload); rec.Payload != want || !strings.Contains(rec.Reason, tc.reason) {
			t.Fatalf("%s: reason %q (want %q), payload kept: %v", tc.name, rec.Reason, tc.reason, rec.Payload == want)
		}
		if n := f.llen(protocol.DoneProcessingKey); n != 0 {
			t.Fatalf("%s: %d results left in processing", tc.name, n)
		}
	}
	if s := f.m.Stats(); s.Quarantined != int64(len(cases)) || s.Merged != 0 {
		t.Fatalf("stats %+v", s)
	}
	f.assertUntouched(docA, "m1", "m1")

	// The merger keeps going: the good result still merges.
	f.pushDone(good)
	f.mustHandleNext()
	if f.m.Stats().Merged != 1 {
		t.Fatalf("stats %+v", f.m.Stats())
	}
}

func jsonRoundTrip(t testing.TB, s string) string {
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

// A 10M-element array under a raised size cap stops at the value limit after one pass over
// its bytes: nothing decodes it, so memory stays a small multiple of the payload.
func TestHugeArrayBoundedMemory(t *testing.T) {
	f := newFixture(t, Config{})
	f.m = f.newMerger(Config{Pipeline: []string{"m1"}, MaxPayload: 32 << 20})
	f.addDoc(docA, "a.txt", "", "m1")
	item := f.dispatch(docA, "m1")
	payload := result("m1", item, `"a":[`+strings.Repeat("0,", 10_000_000)+`0]`, "")
	f.pushDone(payload)
	raw, err := f.q.NextDone(f.ctx, DefaultBlock)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := f.m.Handle(f.ctx, raw); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	recs := f.quarantined()
	if len(recs) != 1 || !strings.Contains(recs[0].Reason, "more than 1048576 JSON values") {
		t.Fatalf("quarantine %d records, reason %q", len(recs), recs[0].Reason)
	}
	// Copies of the payload: the scan's []byte and the quarantine record's encoding (about
	// 5×). Decoding the 10M elements would allocate more (24 bytes each as RawMessages).
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(8*len(payload)) {
		t.Fatalf("handling a %d-byte payload allocated %d bytes", len(payload), alloc)
	}
	t.Logf("payload %d bytes, allocated %d", len(payload), after.TotalAlloc-before.TotalAlloc)
}

// Content of the wrong shape from a current job: quarantined, and the attempt ends as failed
// so the job is retried now.
func TestBadContentQuarantinedAndRetried(t *testing.T) {
	for _, content := range []string{`5`, `{"text":"x"}`, `[1]`, `[{"text":5}]`, `[{"text":"x","time_offset":"1s"}]`} {
		t.Run(content, func(t *testing.T) {
			f := newFixture(t, Config{})
			f.addDoc(docA, "a.txt", "", "m1")
			f.dispatch(docA, "m1")
			payload := f.work("m1", func(item string) string { return result("m1", item, `"title":"x"`, content) })
			f.mustHandleNext()
			recs := f.quarantined()
			if len(recs) != 1 || recs[0].Payload != payload || !strings.Contains(recs[0].Reason, "invalid content") {
				t.Fatalf("quarantine %+v", recs)
			}
			if s := f.m.Stats(); s.Quarantined != 1 || s.Merged != 0 {
				t.Fatalf("stats %+v", s)
			}
			f.assertUntouched(docA, "m1", "m1")
			it, ok, err := f.q.JobItem(f.ctx, "m1", docA)
			if err != nil || !ok {
				t.Fatalf("job entry: %v %v", ok, err)
			}
			if info, _ := protocol.ParseItem(it); info.Job.Attempt != 2 {
				t.Fatalf("attempt %d after a quarantined result, want 2", info.Job.Attempt)
			}
		})
	}
}
