package search

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// decodeObject gives what json.Unmarshal gives into a map[string]any, or fails where it fails.
func TestDecodeObjectMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		`{}`, ` { } `, `null`, `{"a":null}`, `[]`, `"x"`, `1`, `{"a":1,}`, `{"a"}`, ``, `{"a":1}x`,
		`{"id":"d1","n":-0.5e-3,"big":1e308,"huge":1e400,"i":12345678901234567890,"z":0,"neg":-0}`,
		`{"s":"plain","e":"tab\there","u":"\u00e9\ud83d\ude00","bad":"\ud800","q":"a\"b\\c\/d"}`,
		"{\"raw\":\"caf\xc3\xa9\",\"invalid\":\"x\xff\xfey\",\"k\xffey\":1}",
		`{"dup":1,"dup":"two","nested":{"dup":[1,2],"dup":[]}}`,
		`{"arr":[1,"two",true,false,null,{"a":[[]]},[{}]],"empty":{},"emptyarr":[]}`,
		"{\n\t\"ws\" :\r\n [ 1 , 2 ] \n}",
		`{"deep":` + strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001) + `}`,
		`{"deepish":` + strings.Repeat(`{"a":`, 500) + `1` + strings.Repeat(`}`, 500) + `}`,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		cases = append(cases, randomJSON(r, 0))
	}
	for _, c := range cases {
		var want, got map[string]any
		wantErr := json.Unmarshal([]byte(c), &want)
		gotErr := decodeObject([]byte(c), &got, false)
		if (wantErr == nil) != (gotErr == nil) {
			t.Errorf("%.200q: encoding/json error %v, decodeObject error %v", c, wantErr, gotErr)
			continue
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%.200q:\n got %#v\nwant %#v", c, got, want)
		}
	}
}

// randomJSON writes a random object: nested values, strings with escapes, non-ASCII and
// invalid bytes, numbers of every form.
func randomJSON(r *rand.Rand, depth int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range r.IntN(6) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(randomString(r))
		b.WriteByte(':')
		b.WriteString(randomValue(r, depth+1))
	}
	b.WriteByte('}')
	return b.String()
}

func randomValue(r *rand.Rand, depth int) string {
	n := 8
	if depth > 4 {
		n = 6
	}
	switch r.IntN(n) {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[r.IntN(2)]
	case 2, 3:
		return []string{"0", "-0", "1", "-12", "3.25", "1e3", "1E-7", "-2.5e+10", "123456789012345678901234567890", "0.1",
			fmt.Sprint(r.Float64() * 1e6), fmt.Sprint(r.Int64())}[r.IntN(12)]
	case 4, 5:
		return randomString(r)
	case 6:
		var parts []string
		for range r.IntN(4) {
			parts = append(parts, randomValue(r, depth+1))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		return randomJSON(r, depth)
	}
}

func randomString(r *rand.Rand) string {
	pieces := []string{"a", "id", "path", " ", "é", "日本", "\\n", "\\\"", "\\\\", "\\/", "\\u0041", "\\u00e9", "\\ud83d\\ude00",
		"\\ud800", "\xff", "\xc3", "\xe2\x80\xa8", "<&>", "\\t"}
	var b strings.Builder
	b.WriteByte('"')
	for range r.IntN(5) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	b.WriteByte('"')
	return b.String()
}

func FuzzDecodeObject(f *testing.F) {
	f.Add([]byte(`{"id":"d1","paths":{"a/b.txt":1.5},"x":[1,"é",null,{"y":"\u00e9"}]}`))
	f.Add([]byte("{\"k\":\"\xff\\ud800\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var want, got map[string]any
		wantErr := json.Unmarshal(data, &want)
		gotErr := decodeObject(data, &got, false)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%q: encoding/json error %v, decodeObject error %v", data, wantErr, gotErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
		}
	})
}
