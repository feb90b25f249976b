package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

// setMembersReference is SetMembers as the catalog's merge did it before: obj decoded into a
// map, set's members put in, the map marshalled.
func setMembersReference(obj string, set map[string]json.RawMessage) (string, error) {
	m := map[string]json.RawMessage{}
	if obj != "" {
		if err := json.Unmarshal([]byte(obj), &m); err != nil {
			return "", err
		}
		if m == nil {
			return "", errors.New("null, not an object") // the old merge panicked on it
		}
	}
	for k, v := range set {
		m[k] = v
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// SetMembers writes the bytes the reference writes, or fails where it fails.
func FuzzSetMembersMatchesReference(f *testing.F) {
	for _, seed := range []struct{ obj, key, val string }{
		{`{"media":{"w":640,"h":480},"text":{"lang":"en"}}`, "thumbnail", `{"path":"t.webp"}`},
		{`{"media":{"w":640}}`, "media", `{"w":320}`},
		{``, "m", `true`},
		{`{}`, "m", `null`},
		{` { "b" : [ 1 , 2 ] , "a" : "x" } `, "c", ` { "y" : 1 } `},
		{`{"a":1,"a":2,"b":3}`, "c", `4`},
		{`{"a":1,"a":2}`, "a", `5`},
		{`{"h":"<b>&amp;</b>","u":"\u2028 \u2029"}`, "k<>", `"<&>"`},
		{`{"caf\u00e9":1,"\ud800":2,"` + "\xff" + `":3,"é":4}`, "e\u0301", `"x"`},
		{`{"a":1}`, "b", `{"bad":}`},
		{`{"a":1}`, "b", ``},
		{`[1]`, "b", `1`},
		{`null`, "b", `1`},
		{`{"a":1}x`, "b", `1`},
		{`{"a":1.50,"b":1e2,"c":-0}`, "d", `12345678901234567890`},
	} {
		f.Add(seed.obj, seed.key, []byte(seed.val))
	}
	f.Fuzz(func(t *testing.T, obj, key string, val []byte) {
		set := map[string]json.RawMessage{key: val, "z" + key: json.RawMessage(`{"n":1}`)}
		want, wantErr := setMembersReference(obj, set)
		got, gotErr := SetMembers(obj, set)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("SetMembers(%q, %q: %q): error %v, reference %v", obj, key, val, gotErr, wantErr)
		}
		if gotErr == nil && got != want {
			t.Errorf("SetMembers(%q, %q: %q):\n got %s\nwant %s", obj, key, val, got, want)
		}
	})
}

// BenchmarkSetMembers: a module's result merged into the fields of a document that two
// modules have already filled (about 1.9 KB), against the decode-and-marshal it replaced.
func BenchmarkSetMembers(b *testing.B) {
	media := map[string]string{}
	for i := range 40 {
		media[fmt.Sprintf("exif_tag_%02d", i)] = fmt.Sprintf("value number %d with some text", i)
	}
	mb, _ := json.Marshal(media)
	cur, _ := json.Marshal(map[string]json.RawMessage{"media": mb, "text": json.RawMessage(`{"language":"en","words":1234,"pages":3}`)})
	set := map[string]json.RawMessage{"thumbnail": json.RawMessage(`{"path":"thumb.webp","width":320,"height":240}`)}
	for _, c := range []struct {
		name string
		fn   func(string, map[string]json.RawMessage) (string, error)
	}{{"set-members", SetMembers}, {"decode-marshal", setMembersReference}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.fn(string(cur), set); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
