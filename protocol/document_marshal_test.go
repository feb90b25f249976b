package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// referenceMarshal is Document.MarshalJSON as it was before the hand encoder: each value
// through json.Marshal, module fields as stored; json.Marshal then compacted and escaped it.
func referenceMarshal(d Document) ([]byte, error) {
	var b bytes.Buffer
	w := func(k string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		switch vv := v.(type) {
		case json.RawMessage:
			b.Write(vv)
			return nil
		}
		vb, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		b.Write(vb)
		return nil
	}
	b.WriteByte('{')
	paths := d.Paths
	if paths == nil {
		paths = Paths{}
	}
	list := d.PathsList
	if list == nil {
		list = []string{}
	}
	for _, kv := range []struct {
		k string
		v any
	}{{FieldID, d.ID}, {FieldPaths, paths}, {FieldMtime, d.Mtime}, {FieldSize, d.Size},
		{FieldType, d.Type}, {FieldNext, d.Next}, {FieldPathsList, nameList(list)}, {FieldCopies, d.Copies},
		{FieldVersion, d.Version}, {FieldHasArchivePaths, d.HasArchivePaths}, {FieldOffline, d.Offline}} {
		if err := w(kv.k, kv.v); err != nil {
			return nil, err
		}
	}
	if len(d.Failures) > 0 && string(d.Failures) != "{}" && string(d.Failures) != "null" {
		if err := w(FieldFailures, d.Failures); err != nil {
			return nil, err
		}
	}
	keys := make([]string, 0, len(d.Fields))
	for k := range d.Fields {
		if !IsCoreField(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := w(k, d.Fields[k]); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalJSON gives the bytes json.Marshal gave for a document before it was written by
// hand (referenceMarshal, compacted and escaped by json.Marshal), and json.Marshal leaves them
// as they are: for names with <, >, &, U+2028, control characters and bytes that are not
// UTF-8, mtimes of every magnitude, and module fields with whitespace and HTML characters.
func TestDocumentMarshalMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a", "dir/", "<", ">", "&", "\u2028", "\u2029", "é", "\xff", "\x01", "\"", "\\", " ", "日本", "€"}
	name := func() string {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	floats := []float64{0, 1, -1, 1714979289.1234, 1e-7, 1.5e-6, 1e20, 1e21, 123456789e15, math.SmallestNonzeroFloat64, math.MaxFloat64, -0.000001}
	raws := []string{`{"a":1}`, `"plain"`, `[1, 2]`, "{\n  \"x\": \"<b>&amp;</b>\"\n}", `"line\u2028sep"`, "\"\u2028raw\"", `{"e":"€"}`, `null`, `true`, `3.5`,
		`{"t":"words with spaces","q":"a \" b \\","n":[1,"x y"]}`, `["x y", "z"]`, `["a\"", "b\\", "c"]`}
	for i := range 3000 {
		d := Document{ID: fmt.Sprintf("%016x", r.Uint64()), Type: []string{"text/plain", "a<b>&c", "x\u2028y"}[r.IntN(3)],
			Size: r.Int64N(1 << 40), Next: []string{"", "text", "o&cr"}[r.IntN(3)], Copies: r.IntN(5), Version: CurrentVersion,
			HasArchivePaths: r.IntN(2) == 0, Offline: r.IntN(2) == 0, Mtime: floats[r.IntN(len(floats))] * (r.Float64() + 0.5)}
		if i%7 == 0 {
			d.Mtime = floats[r.IntN(len(floats))]
		}
		for range r.IntN(4) {
			p := name()
			d.Paths = append(d.Paths, PathEntry{Path: p, Mtime: floats[r.IntN(len(floats))]})
			d.PathsList = append(d.PathsList, p)
		}
		if r.IntN(3) == 0 {
			d.Failures = json.RawMessage(`{"ocr": {"reason":"a<b","attempts":3}}`)
		}
		if r.IntN(2) == 0 {
			d.Fields = map[string]json.RawMessage{}
			for range r.IntN(4) {
				d.Fields[name()] = json.RawMessage(raws[r.IntN(len(raws))])
			}
			d.Fields[FieldSize] = json.RawMessage(`999`) // a core key among the fields is never written twice
		}
		ref, refErr := referenceMarshal(d)
		var want []byte
		if refErr == nil {
			want, refErr = json.Marshal(json.RawMessage(ref))
		}
		got, err := d.MarshalJSON()
		if (err == nil) != (refErr == nil) {
			t.Fatalf("document %d: error %v, reference error %v", i, err, refErr)
		}
		if err != nil {
			continue
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("document %d:\n got %s\nwant %s", i, got, want)
		}
		if again, err := json.Marshal(d); err != nil || !bytes.Equal(again, got) {
			t.Fatalf("document %d: json.Marshal gives %s (%v), MarshalJSON %s", i, again, err, got)
		}
	}
	for _, bad := range []Document{{Mtime: math.NaN()}, {Paths: Paths{{Path: "a", Mtime: math.Inf(1)}}}, {Fields: map[string]json.RawMessage{"x": json.RawMessage(`{"a" 1}`)}}, {Fields: map[string]json.RawMessage{"x": nil}}} {
		if b, err := bad.MarshalJSON(); err == nil {
			t.Errorf("%+v: marshalled as %s, want an error", bad, b)
		}
	}
}
