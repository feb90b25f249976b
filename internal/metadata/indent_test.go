package metadata

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomJSON writes a random value with whitespace of every kind between its tokens, strings
// holding what a scanner can trip on (quotes, backslashes, braces, commas, colons, U+2028,
// bytes that are not UTF-8) and empty objects and arrays.
func randomJSON(r *rand.Rand, b *strings.Builder, depth int) {
	ws := func() {
		for range r.IntN(3) {
			b.WriteByte(" \t\r\n"[r.IntN(4)])
		}
	}
	strs := []string{`""`, `"plain"`, `"q\"uote"`, `"back\\slash\\"`, `"{[,:]}"`, `"\u2028 \\u00e9 é"`, "\"bad\xff\"", `"\\\"{"`}
	switch k := r.IntN(10); {
	case depth > 0 && k < 3:
		b.WriteByte('{')
		n := r.IntN(4)
		for i := range n {
			ws()
			if i > 0 {
				b.WriteByte(',')
				ws()
			}
			b.WriteString(strs[r.IntN(len(strs))])
			ws()
			b.WriteByte(':')
			ws()
			randomJSON(r, b, depth-1)
		}
		ws()
		b.WriteByte('}')
	case depth > 0 && k < 5:
		b.WriteByte('[')
		for i := range r.IntN(4) {
			ws()
			if i > 0 {
				b.WriteByte(',')
				ws()
			}
			randomJSON(r, b, depth-1)
		}
		ws()
		b.WriteByte(']')
	case k < 7:
		b.WriteString(strs[r.IntN(len(strs))])
	default:
		b.WriteString([]string{"0", "-1.5e-7", "123456789012345678901234567890", "true", "false", "null"}[r.IntN(6)])
	}
}

// TestIndentObjectMatchesEncodingJSON: the one-pass indenter gives json.Compact and
// json.Indent's bytes for valid documents, and their errors for the rest.
func TestIndentObjectMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 5000 {
		var b strings.Builder
		b.WriteString(" {")
		for j := range r.IntN(6) {
			if j > 0 {
				b.WriteString(" ,\n")
			}
			fmt.Fprintf(&b, "\"k%d\" : ", j)
			randomJSON(r, &b, 4)
		}
		b.WriteString("}\n")
		checkIndent(t, i, []byte(b.String()))
	}
	for i, doc := range []string{`{}`, `[]`, `[1]`, `5`, `"s"`, ``, `{`, `{"a":}`, `{"a":1}}`, `{"a":1} x`, "\t{ }\r\n"} {
		checkIndent(t, i, []byte(doc))
	}
}

func FuzzIndentObject(f *testing.F) {
	for _, doc := range []string{`{}`, `{"a":[1,{},[],{"b":"}"}]}`, ` { "x" : "\"" } `, `[1]`, `{`, `{"a":1}}`} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) { checkIndent(t, 0, doc) })
}

func checkIndent(t *testing.T, i int, doc []byte) {
	t.Helper()
	got, err := indentObject(doc)
	want, werr := indentDecoded(doc)
	if (err == nil) != (werr == nil) {
		t.Fatalf("document %d %q: error %v, encoding/json %v", i, doc, err, werr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("document %d %q:\n got %q\nwant %q", i, doc, got, want)
	}
}

// BenchmarkIndentObject: a document as a module hop writes it, through the one-pass
// indenter and through json.Compact and json.Indent.
func BenchmarkIndentObject(b *testing.B) {
	doc := []byte(`{"copies":1,"has_archive_paths":false,"id":"9e3779b97f4a7c15","m1":{"noop":true},"mtime":1795745275.9935,` +
		`"next":"","offline":false,"paths":{"d01/f00001.txt":1795745275.9935},"paths_list":["d01/f00001.txt"],` +
		`"size":2931,"text":{"text":"file 1 qwerty \"quoted\" {braces}","language":"en","words":[]},"type":"text/plain","version":1}`)
	for _, c := range []struct {
		name   string
		indent func([]byte) ([]byte, error)
	}{{"one-pass", indentObject}, {"encoding/json", indentDecoded}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.indent(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
