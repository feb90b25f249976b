package protocol

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// oddNames are names the file system allows and encoding/json would mangle.
var oddNames = []string{
	"caf\xe9.txt", "bad\xff\xfename.txt", "line\nbreak.txt", "tab\there", `quote"back\slash`,
	"\xed\xa0\x80surrogate-as-utf8", "trunc\xe2\x82", "é😀\u2028ok", "\x01\x7f\x80", "",
	"dir\xe9/sub\xff/f\xfe.txt", strings.Repeat("\xe9", 255), strings.Repeat("é", 127) + "x",
}

func TestNameRoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range append(oddNames, randomNames(rand.New(rand.NewPCG(1, 2)), 2000)...) {
		lit := AppendName(nil, s)
		if !json.Valid(lit) {
			t.Fatalf("%q: %s is not JSON", s, lit)
		}
		got, err := UnquoteName(lit)
		if err != nil || got != s {
			t.Fatalf("%q: %s read back as %q (%v)", s, lit, got, err)
		}
		var n Name
		if err := json.Unmarshal(lit, &n); err != nil || string(n) != s {
			t.Fatalf("%q: Name.UnmarshalJSON = %q (%v)", s, n, err)
		}
		// encoding/json reads the escapes as U+FFFD: the display form.
		var std string
		if err := json.Unmarshal(lit, &std); err != nil || std != DisplayName(s) {
			t.Fatalf("%q: encoding/json reads %q, Display says %q", s, std, DisplayName(s))
		}
	}
}

func TestNameRejectsSurrogatesThatAreNoByte(t *testing.T) {
	t.Parallel()
	for _, lit := range []string{`"\ud800"`, `"\udc41"`, `"a\ud83dx"`, `"\udc7f"`, `"x`, `"\q"`, `"\u12"`} {
		if s, err := UnquoteName([]byte(lit)); !errors.Is(err, ErrBadName) {
			t.Errorf("%s: got %q, %v; want ErrBadName", lit, s, err)
		}
	}
	if s, err := UnquoteName([]byte(`"\ud83d\ude00\udce9\u00e9\/"`)); err != nil || s != "😀\xe9é/" {
		t.Errorf("pair then escape: %q, %v", s, err)
	}
}

func TestLineName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain é.txt":  "plain é.txt",
		"a\nb\\c\x1b":  `a\nb\\c\x1b`,
		"caf\xe9.txt":  "caf\ufffd.txt",
		"\xff\xfe\r\t": "\ufffd\ufffd\\r\\t",
	} {
		if got := LineName(in); got != want {
			t.Errorf("LineName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDocumentPathsKeepBytes(t *testing.T) {
	t.Parallel()
	d := Document{ID: "abc", Paths: Paths{{Path: "caf\xe9.txt", Mtime: 1.5}, {Path: "a\nb/\xff\xfe", Mtime: 2}},
		PathsList: []string{"a\nb/\xff\xfe", "caf\xe9.txt"}}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"caf\udce9.txt":1.5`)) || !bytes.Contains(b, []byte(`"paths_list":["a\nb/\udcff\udcfe","caf\udce9.txt"]`)) {
		t.Fatalf("document JSON %s", b)
	}
	var back Document
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Paths[0].Path != d.Paths[0].Path || back.Paths[1].Path != d.Paths[1].Path ||
		back.PathsList[0] != d.PathsList[0] || back.PathsList[1] != d.PathsList[1] {
		t.Fatalf("read back %+v", back)
	}
	// A queue item carries the same escapes, and an indented document.json reads back too.
	item, err := BuildItem("abc", b, "", Job{Token: "ab", Attempt: 1, Since: 1})
	if err != nil {
		t.Fatal(err)
	}
	var fromItem Document
	if err := json.Unmarshal([]byte(item), &fromItem); err != nil || fromItem.Paths[0].Path != "caf\xe9.txt" {
		t.Fatalf("item %s read back as %+v (%v)", item, fromItem, err)
	}
	ind, _ := json.MarshalIndent(d, "", "    ")
	var fromIndent Document
	if err := json.Unmarshal(ind, &fromIndent); err != nil || fromIndent.Paths[1].Path != "a\nb/\xff\xfe" {
		t.Fatalf("indented %s read back as %+v (%v)", ind, fromIndent, err)
	}
}

// TestNameMatchesCPython checks the codec against CPython itself, both ways, on thousands of
// random byte names: json.dumps(os.fsdecode(b)) is byte for byte what we put in a queue item
// (AppendName, then the item's ASCII escaping), and os.fsencode(json.loads(ours)) gives b back.
func TestNameMatchesCPython(t *testing.T) {
	t.Parallel()
	names := append(append([]string{}, oddNames...), randomNames(rand.New(rand.NewPCG(7, 11)), 5000)...)
	var in bytes.Buffer
	for _, s := range names {
		var a strings.Builder
		writeASCII(&a, AppendName(nil, s))
		in.WriteString(hex.EncodeToString([]byte(s)) + " " + a.String() + "\n")
	}
	const script = `
import json, os, sys
for line in sys.stdin:
    h, ours = line.rstrip("\n").split(" ", 1)
    b = bytes.fromhex(h)
    back = os.fsencode(json.loads(ours)).hex()
    print(json.dumps(os.fsdecode(b)), back)
`
	cmd := exec.Command("python3", "-c", script)
	cmd.Env = []string{"PYTHONUTF8=1", "LC_ALL=C.UTF-8"}
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	i := 0
	for ; sc.Scan(); i++ {
		line := sc.Text()
		cut := strings.LastIndexByte(line, ' ')
		pyDump, back := line[:max(cut, 0)], line[cut+1:]
		s := names[i]
		var ours strings.Builder
		writeASCII(&ours, AppendName(nil, s))
		if pyDump != ours.String() {
			t.Fatalf("%q: CPython json.dumps(os.fsdecode()) = %s, ours %s", s, pyDump, ours.String())
		}
		if back != hex.EncodeToString([]byte(s)) {
			t.Fatalf("%q: CPython os.fsencode(json.loads(ours)) = %s", s, back)
		}
		if got, err := UnquoteName([]byte(pyDump)); err != nil || got != s {
			t.Fatalf("%q: CPython's %s read back as %q (%v)", s, pyDump, got, err)
		}
	}
	if i != len(names) {
		t.Fatalf("python answered %d of %d names", i, len(names))
	}
}

// randomNames returns n names of 1 to 64 bytes, mixing ASCII, high bytes, valid multi-byte
// sequences (astral too), encoded surrogates, truncated sequences and control characters.
func randomNames(r *rand.Rand, n int) []string {
	pieces := []string{"a", "Z", ".", "/", " ", "\n", "\t", `"`, `\`, "\x7f", "\x00", "é", "€", "😀",
		"\u2028", "\xed\xa0\x80", "\xed\xbf\xbf", "\xe2\x82", "\xf0\x9f\x98", "\xc0\xaf", "\xf4\x90\x80\x80"}
	out := make([]string, n)
	for i := range out {
		var b []byte
		for want := 1 + r.IntN(64); len(b) < want; {
			if r.IntN(3) == 0 {
				b = append(b, pieces[r.IntN(len(pieces))]...)
			} else {
				b = append(b, byte(r.IntN(256)))
			}
		}
		out[i] = string(b)
	}
	return out
}

// A document reads its core fields typed and keeps every other field's JSON as is; a repeated
// key counts by its last value (null included), and the fields kept do not share the caller's
// buffer (json.Unmarshal may reuse it).
func TestDocumentReadsFields(t *testing.T) {
	t.Parallel()
	data := []byte(` { "id" : "abc", "paths": {"a.txt": 1.5}, "size": 3, "next": "m", "uid": "u", "_hi_job": "ab",
		"note": {"k": [1, "x"]}, "size": 4, "paths": null, "type": "text/plain", "type": null, "empty": null } `)
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	if d.ID != "abc" || d.Size != 4 || d.Next != "m" || d.Paths != nil || d.Type != "" {
		t.Errorf("core fields %+v", d)
	}
	if len(d.Fields) != 2 || string(d.Fields["note"]) != `{"k": [1, "x"]}` || string(d.Fields["empty"]) != "null" {
		t.Errorf("fields %q", d.Fields)
	}
	for i := range data {
		data[i] = ' '
	}
	if string(d.Fields["note"]) != `{"k": [1, "x"]}` {
		t.Errorf("a field changed with the caller's buffer: %q", d.Fields["note"])
	}
	for _, bad := range []string{`[]`, `null`, `{"size":"x"}`, `{"id":"a"}}`, `{"id":"a"`} {
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("%s read without an error", bad)
		}
	}
}

// pathsRecord is what a Paths decode gave: the entries (exact bytes, mtime bits) or the error.
func pathsRecord(decode func(*Paths, []byte) error, data []byte) string {
	var p Paths
	if err := decode(&p, data); err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "nil=%v", p == nil)
	for _, e := range p {
		fmt.Fprintf(&b, " %q=%x", e.Path, math.Float64bits(e.Mtime))
	}
	return b.String()
}

// Paths's scanner gives what the decoder gives: the same entries in the same order, and the
// decoder's own error for anything it does not take (the scanner hands those over).
func FuzzPathsScanMatchesDecoder(f *testing.F) {
	for _, seed := range []string{
		`{}`, ` { } `, `null`, ` null `, `{"a":1}`, "{\n\t\"a/b.txt\" : 1.5e9 ,\r\n \"c\":-0\n}\n",
		`{"d\u00e9j\u00e0":1,"back\\slash":2,"q\"uote":3,"\udcff\udc80":4,"\ud83d\ude00":5,"/":6}`,
		`{"a":1,"a":2}`, "{\"\xff\xfe\":1}", `{"x":1e400}`, `{"x":-1e-400}`, `{"x":123456789012345678901234567890}`,
		`{"x":"1"}`, `{"x":true}`, `{"x":null}`, `{"x":[1]}`, `{"x":{}}`, `{"\ud800":1}`, `{"\udc10":1}`,
		`[1]`, `"x"`, `1`, ``, `{`, `{"a":}`, `{"a":1,}`, `{"a":1}x`, `{"a":1} {"b":2}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := pathsRecord((*Paths).UnmarshalJSON, data)
		want := pathsRecord((*Paths).decode, data)
		if got != want {
			t.Errorf("Paths.UnmarshalJSON(%q):\n got %s\nwant %s", data, got, want)
		}
	})
}

// documentReference is Document.UnmarshalJSON as it was before decodeCore and the names'
// one-pass scans: every core field through json.Unmarshal.
func documentReference(data []byte) (Document, error) {
	data = bytes.Clone(data)
	var d Document
	err := EachMember(data, func(k string, v json.RawMessage) error {
		dst := d.member(k, v)
		if dst == nil {
			return nil
		}
		if string(v) == "null" {
			reflect.ValueOf(dst).Elem().SetZero()
			return nil
		}
		return json.Unmarshal(v, dst)
	})
	return d, err
}

// Document.UnmarshalJSON gives what it gave when every core field went through json.Unmarshal:
// the same document, or an error where that had one.
func FuzzDocumentMatchesReference(f *testing.F) {
	for _, seed := range []string{
		`{"id":"0123456789abcdef","paths":{"a/b.txt":1.5e9,"c\"d":2},"mtime":1.5,"size":10,"type":"text/plain","next":"m","paths_list":["a/b.txt","c\"d"],"copies":1,"version":1,"has_archive_paths":false,"offline":true,"media":{"w":1}}`,
		`{"id":"caf\u00e9","type":"é","next":"\ud83d\ude00","paths_list":["r\udce9sum\udce9.doc"],"paths":{"r\udce9sum\udce9.doc":1}}`,
		`{"id":"` + "\xff" + `","type":"a\tb"}`, `{"id":1}`, `{"id":null,"size":null,"paths":null,"paths_list":null}`,
		`{"size":1e3}`, `{"size":1.0}`, `{"size":-0}`, `{"size":9223372036854775807}`, `{"size":9223372036854775808}`,
		`{"copies":2147483648}`, `{"version":"1"}`, `{"mtime":1e400}`, `{"mtime":-1e-400}`, `{"mtime":"1.5"}`, `{"mtime":true}`,
		`{"offline":1}`, `{"offline":"true"}`, `{"has_archive_paths":false,"offline":null}`,
		`{"paths_list":[1]}`, `{"paths_list":{}}`, `{"paths_list":[]}`, `{"paths_list":[ "a" , "b" ]}`,
		`{"paths":{"a":"1"}}`, `{"paths":[]}`, `{"paths":{}}`, `{"failures":{"m":{"attempts":1}}}`,
		`{"id":"a","id":"b"}`, `{"size":1,"size":null}`, `[]`, `{`, `{"id":"a"}x`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got Document
		gotErr := got.UnmarshalJSON(data)
		want, wantErr := documentReference(data)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("UnmarshalJSON(%q): error %v, reference %v", data, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("UnmarshalJSON(%q):\n got %#v\nwant %#v", data, got, want)
		}
	})
}
