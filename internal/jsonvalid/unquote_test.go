package jsonvalid

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// unquoteCases are string literals whose decoding is easy to get wrong; each is checked
// against json.Unmarshal into a string, and seeds the fuzzer.
var unquoteCases = []string{
	`""`, `"a"`, `"plain ascii text"`, `"caf` + "\xc3\xa9" + `"`, `"\u00e9"`, `"\u00E9"`,
	`"line\nbreak"`, `"\"\\\/\b\f\n\r\t"`, `"tab\there"`, `"\u0000"`, `"\u001f"`,
	`"\ud83d\ude00"`, `"\uD83D\uDE00"`, `"\ud83d"`, `"\ude00"`, `"\ud83dx"`, `"\ud83d\u0041"`,
	`"\ude00\ud83d"`, `"\ud83d\ud83d\ude00"`, `"\ud83d\n"`, `"\ud83d\u12"`, `"\ud83d\uzzzz"`,
	`"\u12"`, `"\u00g9"`, `"\x"`, `"\'"`, `"\`, `"\"`, `"a"b"`, `"a`, `a"`, `"`, ``,
	"\"a\x00b\"", "\"a\x1fb\"", "\"a\x7fb\"", "\"\xff\xfe\"", "\"\xc3\"", "\"\xc3(\"",
	"\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xe2\x80\xa8\"", "\"\xef\xbb\xbf\"",
	`"` + strings.Repeat(`a\n`, 100) + `"`, `"` + strings.Repeat("\xff", 50) + `"`,
	`"` + "\u2028\u2029" + `"`, `"\u2028"`, `"<&>"`, `"\u003c\u0026\u003e"`,
}

// unquoteAgainstJSON fails t when Unquote and json.Unmarshal disagree on lit: Unquote may
// refuse only what json.Unmarshal refuses, and what it accepts it decodes the same.
func unquoteAgainstJSON(t *testing.T, lit []byte) {
	t.Helper()
	got, ok := Unquote(lit)
	var want string
	err := json.Unmarshal(lit, &want)
	isString := len(lit) > 0 && lit[0] == '"' && len(strings.TrimSpace(string(lit))) == len(lit)
	switch {
	case ok && err != nil:
		t.Fatalf("Unquote(%q) = %q, but encoding/json refuses it: %v", lit, got, err)
	case ok && got != want:
		t.Fatalf("Unquote(%q) = %q, encoding/json gives %q", lit, got, want)
	case !ok && err == nil && isString:
		t.Fatalf("Unquote(%q) refused a literal encoding/json decodes to %q", lit, want)
	}
}

func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, c := range unquoteCases {
		unquoteAgainstJSON(t, []byte(c))
	}
}

// TestUnquoteEveryEscape decodes every \u escape of the Basic Multilingual Plane, alone and
// before a low surrogate, and every pair of surrogates.
func TestUnquoteEveryEscape(t *testing.T) {
	const hex = "0123456789abcdef"
	esc := func(r int) string {
		return `\u` + string([]byte{hex[r>>12], hex[r>>8&15], hex[r>>4&15], hex[r&15]})
	}
	for r := range 0x10000 {
		unquoteAgainstJSON(t, []byte(`"`+esc(r)+`"`))
		unquoteAgainstJSON(t, []byte(`"x`+esc(r)+esc(0xdc00)+`y"`))
	}
	for hi := 0xd800; hi < 0xe000; hi += 0x3f {
		for lo := 0xd800; lo < 0xe000; lo += 0x3f {
			unquoteAgainstJSON(t, []byte(`"`+esc(hi)+esc(lo)+`"`))
		}
	}
}

func FuzzUnquoteMatchesEncodingJSON(f *testing.F) {
	for _, c := range unquoteCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		unquoteAgainstJSON(t, lit)
		// The same bytes as a literal's body, so that most inputs are strings.
		quoted := append(append([]byte{'"'}, lit...), '"')
		unquoteAgainstJSON(t, quoted)
	})
}

// chunkLiteral is a chunk's text as a module result holds it: lines, accents, quotes.
var chunkLiteral = []byte(`"` + strings.Repeat(`Le caf\u00e9 \"Chez Nous\" ouvre \u00e0 8h.\nInvoice no. 2041 \u2013 total 1,250.00 EUR\n`, 12) + `"`)

func BenchmarkUnquote(b *testing.B) {
	b.SetBytes(int64(len(chunkLiteral)))
	for b.Loop() {
		if _, ok := Unquote(chunkLiteral); !ok {
			b.Fatal("refused")
		}
	}
}

func BenchmarkUnquoteEncodingJSON(b *testing.B) {
	b.SetBytes(int64(len(chunkLiteral)))
	for b.Loop() {
		var s string
		if err := json.Unmarshal(chunkLiteral, &s); err != nil {
			b.Fatal(err)
		}
	}
}

// stringEndAgainstValidator fails t when StringEnd disagrees with the validator on a valid
// literal at the start of data: the same end, and escaped exactly when a backslash is inside.
func stringEndAgainstValidator(t *testing.T, data []byte) {
	t.Helper()
	want := str(data, 0)
	if len(data) == 0 || data[0] != '"' || want < 0 {
		return // StringEnd is for valid literals only
	}
	end, escaped := StringEnd(data, 0)
	if end != want || escaped != bytes.Contains(data[1:want-1], []byte{'\\'}) {
		t.Fatalf("StringEnd(%q) = %d, %v; the literal ends at %d", data, end, escaped, want)
	}
}

func TestStringEnd(t *testing.T) {
	for _, c := range append(unquoteCases, `"\\"x"`, `"\\\"" "`, `"a\\\\\"b" , 1`, `"\u0022"}`, `""""`) {
		stringEndAgainstValidator(t, []byte(c))
	}
}

func FuzzStringEnd(f *testing.F) {
	for _, c := range unquoteCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		stringEndAgainstValidator(t, data)
		stringEndAgainstValidator(t, append(append([]byte{'"'}, data...), '"', ','))
	})
}
