package merge

import (
	"encoding/json"
	"strings"
	"testing"
)

var testLimits = scanLimits{maxDepth: 8, maxValues: 100}

func TestScanPayload(t *testing.T) {
	ok := []string{
		`{}`, ` {"a":1} `, `{"a":[]}`, `{"a":{}}`, `{"a":"\u00e9\"\\\/\b\f\n\r\t"}`,
		`{"a":-0.5e+10,"b":0,"c":1E3,"d":-12.25}`, `{"a":true,"b":false,"c":null}`,
		`{"é":"ü","a":[1, 2, 3], "b": {"c": [{"d": null}]}}`,
		`{"a":1,"A":2}`,             // keys are case-sensitive
		`{"a":{"k":1},"b":{"k":1}}`, // the same key in two objects
		"{\"k\":\"\u2028\"}",
	}
	for _, s := range ok {
		if _, err := scanPayload([]byte(s), testLimits); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	bad := map[string]string{
		``:                            "empty payload",
		`  `:                          "empty payload",
		`[]`:                          "want a JSON object",
		`"x"`:                         "want a JSON object",
		`{`:                           "truncated",
		`{"a`:                         "truncated",
		`{"a":`:                       "truncated",
		`{"a":1`:                      "truncated",
		`{"a":[1,`:                    "truncated",
		`{"a":"\u00`:                  "truncated",
		`{"a":"\`:                     "truncated",
		`{"a":-`:                      "truncated",
		`{"a":fals`:                   "truncated",
		`{"a":1}}`:                    "data after",
		`{"a":1,}`:                    "invalid JSON",
		`{"a":[1,]}`:                  "invalid JSON",
		`{"a" 1}`:                     "invalid JSON",
		`{a:1}`:                       "invalid JSON",
		`{"a":01}`:                    "invalid JSON",
		`{"a":1.}`:                    "invalid JSON",
		`{"a":1e}`:                    "invalid JSON",
		`{"a":.5}`:                    "invalid JSON",
		`{"a":+1}`:                    "invalid JSON",
		`{"a":nul}`:                   "invalid JSON",
		`{"a":True}`:                  "invalid JSON",
		`{"a":"\x"}`:                  "bad escape",
		`{"a":"\u12g4"}`:              "bad \\u escape",
		"{\"a\":\"\t\"}":              "control character",
		"{\"a\":\"\xff\"}":            "invalid UTF-8",
		"{\"a\":\"\xed\xa0\x80\"}":    "invalid UTF-8", // an encoded surrogate
		`{"a":1,"a":2}`:               `duplicate key "a"`,
		`{"a":1,"\u0061":2}`:          `duplicate key "a"`,
		`{"o":{"x":[{"k":1,"k":1}]}}`: `duplicate key "k"`,
		`{"a":[[[[[[[[1]]]]]]]]}`:     "nesting deeper than 8",
		`{"a":[` + strings.Repeat("1,", 100) + `1]}`: "more than 100 JSON values",
	}
	for s, want := range bad {
		_, err := scanPayload([]byte(s), testLimits)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", s, err, want)
		}
	}
}

// Many keys in one object switch the key set to a map; duplicates are still found.
func TestScanManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 50 {
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1,`)
	}
	lim := scanLimits{maxDepth: 4, maxValues: 1000}
	top, err := scanPayload([]byte(b.String()+`"end":1}`), lim)
	if err != nil || !top.has("end") || !top.has("kxxx") || top.has("nope") {
		t.Fatalf("keys of the big object: %v", err)
	}
	if _, err := scanPayload([]byte(b.String()+`"kxxx":1}`), lim); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("duplicate after the switch: %v", err)
	}
}

// The scanner agrees with encoding/json on validity for top-level objects within the limits
// and without duplicate keys.
func FuzzScanPayload(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":null}],"c":"\u00e9"}`, `{"a":1e5}`, `{"a":"x\"y"}`,
		`{"a":-0}`, `{"a" : [ true , false ] }`, `{"a":1,"a":2}`, "{\"a\":\"\xff\"}", `{"a":[`} {
		f.Add([]byte(s))
	}
	lim := scanLimits{maxDepth: 32, maxValues: 10000}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := scanPayload(data, lim)
		var obj map[string]json.RawMessage
		valid := json.Valid(data) && json.Unmarshal(data, &obj) == nil && obj != nil
		if err == nil && !valid {
			t.Fatalf("scan accepted %q, encoding/json refuses it", data)
		}
		if err != nil && valid && !limitError(err) {
			t.Fatalf("scan refused %q (%v), encoding/json accepts it", data, err)
		}
	})
}

// limitError reports the refusals encoding/json has no notion of.
func limitError(err error) bool {
	for _, s := range []string{"duplicate key", "nesting deeper", "more than", "invalid UTF-8"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// Only the payload object's keys are reported, whatever nests inside.
func TestScanTopKeys(t *testing.T) {
	top, err := scanPayload([]byte(`{"module":"m","document":{"id":"x","_hi_error":"no"},"_hi_error":""}`), testLimits)
	if err != nil {
		t.Fatal(err)
	}
	if !top.has("module") || !top.has("_hi_error") || top.has("id") {
		t.Fatalf("top keys %v", top.small)
	}
}

func TestCut(t *testing.T) {
	if got := cut("ééé", 3); got != "é…" {
		t.Fatalf("cut %q", got)
	}
	if got := cut("abc", 3); got != "abc" {
		t.Fatalf("cut %q", got)
	}
}
