package protocol

import (
	"encoding/json"
	"testing"
)

// TestTimeoutMember checks the member against strings produced by CPython 3's
// json.dumps({"q": q, "d": d}) (the upstream runtime's add_timeout).
func TestTimeoutMember(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ q, d, want string }{
		{"m:check", "{\"id\":\"0123456789abcdef\",\"paths\":{\"a b/c.txt\":1.5},\"uid\":\"u1\",\"_hi_job\":\"ab\",\"_hi_attempt\":1,\"_hi_since\":5}", `{"q": "m:check", "d": "{\"id\":\"0123456789abcdef\",\"paths\":{\"a b/c.txt\":1.5},\"uid\":\"u1\",\"_hi_job\":\"ab\",\"_hi_attempt\":1,\"_hi_since\":5}"}`},
		{"ocr:run", "{\"id\":\"x\",\"t\":\"caf\\u00e9 \\\"q\\\" \\\\ tab\\t\"}", `{"q": "ocr:run", "d": "{\"id\":\"x\",\"t\":\"caf\\u00e9 \\\"q\\\" \\\\ tab\\t\"}"}`},
		{"m:check", "raw é \u007f \n\r\t\b\f \u0001 😀 \"\\", `{"q": "m:check", "d": "raw \u00e9 \u007f \n\r\t\b\f \u0001 \ud83d\ude00 \"\\"}`},
	} {
		got := TimeoutMember(tc.q, tc.d)
		if got != tc.want {
			t.Errorf("TimeoutMember(%q, %q)\n got %s\nwant %s", tc.q, tc.d, got, tc.want)
		}
		q, d, err := ParseTimeoutMember(got)
		if err != nil || q != tc.q || d != tc.d {
			t.Errorf("ParseTimeoutMember(%s) = %q, %q, %v; want %q, %q", got, q, d, err, tc.q, tc.d)
		}
	}
}

func TestParseTimeoutMemberRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `[]`, `{"q": "m:check"}`, `{"d": "x"}`, `{"q": 1, "d": "x"}`, `{"q": "a", "d": "x"} x`} {
		if _, _, err := ParseTimeoutMember(in); err == nil {
			t.Errorf("ParseTimeoutMember(%q): got no error", in)
		}
	}
}

func TestParseDone(t *testing.T) {
	t.Parallel()
	raw := `{"module": "ocr", "document": {"id": "abc", "uid": "u", "_hi_job": "ff", "_hi_attempt": 2, "_hi_since": 7, "ocr": {"text": "hi"}}, "content": "hello"}`
	m, err := ParseDone([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if m.Module != "ocr" || m.Legacy || string(m.Content) != `"hello"` || m.Error != "" {
		t.Errorf("got %+v", m)
	}
	info, err := m.Item()
	if err != nil {
		t.Fatal(err)
	}
	want := ItemInfo{ID: "abc", UID: "u", HasJob: true, Job: Job{Token: "ff", Attempt: 2, Since: 7}}
	if info != want {
		t.Errorf("Item() = %+v, want %+v", info, want)
	}

	legacy, err := ParseDone([]byte(`{"module": "ocr", "id": "abc", "next": ""}`))
	if err != nil || !legacy.Legacy || legacy.Module != "ocr" {
		t.Errorf("legacy: got %+v, %v", legacy, err)
	}
	failed, err := ParseDone([]byte(`{"module": "ocr", "document": {"id": "abc"}, "_hi_error": "boom", "content": null}`))
	if err != nil || failed.Error != "boom" || failed.Content != nil {
		t.Errorf("error field: got %+v, %v", failed, err)
	}
	for _, bad := range []string{`{}`, `{"module": ""}`, `{"module": "m", "document": 3}`, `not json`, `{"module": 3}`} {
		if _, err := ParseDone([]byte(bad)); err == nil {
			t.Errorf("ParseDone(%s): got no error", bad)
		}
	}
	var _ json.RawMessage = m.Document
}
