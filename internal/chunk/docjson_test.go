package chunk

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDocMarshalOrderAndDeterminism(t *testing.T) {
	content := json.RawMessage(`[{"text":"<b>x</b> & \"q\" y","zeta":1,"alpha":{"b": 2, "a": [1, 2]},"time_offset":0.25,"page":2}]`)
	encode := func() []byte {
		segs, err := ParseContent(content, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(Chunks("ab12", "mod", 100, segs, DefaultOptions))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := encode()
	want := `[{"id":"mod_ab12_0","file_id":"ab12","module":"mod","text":"\u003cb\u003ex\u003c/b\u003e \u0026 \"q\" y",` +
		`"index":0,"segment":0,"start_time":100.25,"char_offset":0,"char_length":16,` +
		`"alpha":{"b":2,"a":[1,2]},"page":2,"time_offset":0.25,"zeta":1}]`
	if string(first) != want {
		t.Errorf("got  %s\nwant %s", first, want)
	}
	docs, err := ParseContent(content, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := Chunks("ab12", "mod", 100, docs, DefaultOptions)[0].MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := want[1 : len(want)-1]; string(direct) != want {
		t.Errorf("MarshalJSON called directly:\ngot  %s\nwant %s", direct, want)
	}
	for range 20 {
		if again := encode(); !bytes.Equal(again, first) {
			t.Fatalf("output changed between runs:\n%s\n%s", first, again)
		}
	}
}

func TestDocMarshalRejectsBadField(t *testing.T) {
	d := Doc{ID: "x", Fields: map[string]json.RawMessage{"page": json.RawMessage(`{`)}}
	if _, err := json.Marshal(d); err == nil || !strings.Contains(err.Error(), `field "page"`) {
		t.Errorf("got %v, want an error naming the field", err)
	}
}

func TestDocRoundTripThroughFile(t *testing.T) {
	segs, err := ParseContent(json.RawMessage(`["`+words(700, " ")+`", {"text":"é ü","time_offset":3,"page":1}]`), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	docs := Chunks("ff00", "ocr", 5.5, segs, DefaultOptions)
	b, err := json.MarshalIndent(docs, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "chunks.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back []Doc
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != len(docs) {
		t.Fatalf("read %d docs, wrote %d", len(back), len(docs))
	}
	for i := range docs {
		if !reflect.DeepEqual(back[i], docs[i]) {
			t.Errorf("doc %d:\nread  %#v\nwrote %#v", i, back[i], docs[i])
		}
	}
	if err := json.Unmarshal([]byte(`{"id":1}`), &back[0]); err == nil {
		t.Error("a non-string id decoded without error")
	}
}
