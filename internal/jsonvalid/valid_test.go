package jsonvalid

import (
	"encoding/json"
	"strings"
	"testing"
)

// cases are inputs whose validity is easy to get wrong; each is checked against
// encoding/json.Valid, which is the reference, and seeds the fuzzer.
var cases = []string{
	``, ` `, `{}`, `[]`, `{ }`, `[ ]`, `{`, `}`, `[`, `]`, `[}`, `{]`, `{"a":1}`, `{"a":1,}`,
	`{"a" 1}`, `{"a":}`, `{,"a":1}`, `{"a":1 "b":2}`, `{1:2}`, `[1,2]`, `[1,]`, `[,1]`, `[1 2]`,
	`"x"`, `"x`, `"\"`, `"\\"`, `"\/\b\f\n\r\t"`, `"\u00e9"`, `"\u00g9"`, `"\u12"`, `"\x"`,
	"\"a\x00b\"", "\"a\x1fb\"", "\"a\x7fb\"", "\"\xff\xfe\"", "\"caf\xc3\xa9\"",
	`0`, `-0`, `01`, `-`, `-a`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1e5`, `1E-5`, `1.5e+10`, `-1.5E07`,
	`+1`, `0x1`, `1_000`, `Infinity`, `NaN`,
	`true`, `false`, `null`, `tru`, `nul`, `falsey`, `True`, `nulll`,
	` {"a" : [ 1 , { "b" : null } ] } `, "\t\n\r{}\r\n\t", `{} {}`, `{}x`, `[]]`, `{}}`,
	`{"a":{"b":{"c":[[[]]]}}}`, `[[[[[[[[[[1]]]]]]]]]]`, `[{},[],{"":""}]`,
	`{"paths":{"a/b.txt":1700000000.5},"id":"0123456789abcdef","size":12}`,
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, c := range cases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

// TestValidNestingLimit: encoding/json refuses more than 10,000 nested containers, empty
// ones included; the stack that tracks them moves to the heap at 512 levels.
func TestValidNestingLimit(t *testing.T) {
	for _, n := range []int{1, 63, 64, 65, 511, 512, 513, 9999, 10000, 10001, 20000} {
		for _, open := range []string{"[", `{"k":`} {
			close := map[string]string{"[": "]", `{"k":`: "}"}[open]
			for _, inner := range []string{"1", "[]", "{}"} {
				doc := strings.Repeat(open, n-1) + inner + strings.Repeat(close, n-1)
				if inner == "1" {
					doc = strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
				}
				if got, want := Valid([]byte(doc)), json.Valid([]byte(doc)); got != want {
					t.Errorf("%d levels of %s around %s: Valid = %v, encoding/json says %v", n, open, inner, got, want)
				}
			}
		}
	}
	// Alternating containers, to exercise both kinds of bit at every depth.
	var b strings.Builder
	for i := range 600 {
		if i%2 == 0 {
			b.WriteString(`{"a":`)
		} else {
			b.WriteString(`[`)
		}
	}
	b.WriteString("1")
	for i := 599; i >= 0; i-- {
		if i%2 == 0 {
			b.WriteString(`}`)
		} else {
			b.WriteString(`]`)
		}
	}
	if !Valid([]byte(b.String())) {
		t.Error("600 alternating levels: want valid")
	}
	// The wrong closer at depth 600 is caught.
	bad := []byte(b.String())
	bad[len(bad)-300] = ']'
	if Valid(bad) != json.Valid(bad) {
		t.Errorf("a wrong closer deep inside: Valid = %v, encoding/json says %v", Valid(bad), json.Valid(bad))
	}
}

func FuzzValidMatchesEncodingJSON(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", data, got, want)
		}
	})
}

// document is a rendered document of the size a first sync writes.
var document = []byte(`{"id":"0123456789abcdef","type":"text/plain","size":2871,"mtime":1577836800.5,` +
	`"paths":{"d0000/f0000000.txt":1577836800.5},"copies":1,"version":1,"next":"",` +
	`"hash":"xxh64","name":"f0000000.txt","extension":"txt","kind":"document","offline":false,` +
	`"has_archive_paths":false,"sort_name":"f0000000.txt","date":1577836800.5,"year":2020}`)

func BenchmarkValid(b *testing.B) {
	b.SetBytes(int64(len(document)))
	for b.Loop() {
		if !Valid(document) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkEncodingJSONValid(b *testing.B) {
	b.SetBytes(int64(len(document)))
	for b.Loop() {
		if !json.Valid(document) {
			b.Fatal("invalid")
		}
	}
}
