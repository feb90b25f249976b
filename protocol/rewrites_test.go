package protocol

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestRewrites: whitespace counts only between tokens, and only U+2028 and U+2029 among the
// characters whose UTF-8 starts with 0xe2.
func TestRewrites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw             string
		compact, escape bool
	}{
		{`{"a":"b c"}`, false, false},
		{`{"a b":["c\td"]}`, false, false},
		{`{"a": 1}`, true, false},
		{"{\"a\":1}\n", true, false},
		{`{"a":"x\" y"}`, false, false},     // the escaped quote does not end the string
		{`{"a":"x\\" ,"b":1}`, true, false}, // the escaped backslash does
		{`{"a":"Tom & Jerry"}`, false, true},
		{`{"a":"<b>"}`, false, true},
		{"{\"a\":\"\u2028\"}", false, true},
		{"{\"a\":\"\u2029\"}", false, true},
		{"{\"a\":\"\u2013 \u2019 \u2026\"}", false, false}, // e2 80 93, e2 80 99, e2 80 a6
		{"{ \"a\":\"&\"}", true, true},
	} {
		compact, escape := Rewrites([]byte(tc.raw))
		if compact != tc.compact || escape != tc.escape {
			t.Errorf("Rewrites(%s) = %v, %v; want %v, %v", tc.raw, compact, escape, tc.compact, tc.escape)
		}
	}
}

// FuzzRewritesMatchesEncodingJSON: for valid JSON, Rewrites says compact exactly when
// json.Compact changes the bytes, and escape exactly when json.HTMLEscape does.
func FuzzRewritesMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{`{"a":"b c"}`, `{"a": [1, 2]}`, `"x\"y z"`, `{"a":"\\"}`, "\"\u2028\u2013\"", `{"<":">&"}`, ` 1 `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			Rewrites(raw) // any answer, but no panic
			return
		}
		var c, e bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			t.Fatal(err)
		}
		json.HTMLEscape(&e, raw)
		compact, escape := Rewrites(raw)
		if want := !bytes.Equal(c.Bytes(), raw); compact != want {
			t.Errorf("Rewrites(%q): compact %v, json.Compact changes it: %v", raw, compact, want)
		}
		if want := !bytes.Equal(e.Bytes(), raw); escape != want {
			t.Errorf("Rewrites(%q): escape %v, json.HTMLEscape changes it: %v", raw, escape, want)
		}
	})
}
