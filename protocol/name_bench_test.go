package protocol

import (
	"encoding/json"
	"fmt"
	"testing"
)

// benchPaths are typical relative paths, plus one that is not UTF-8.
var benchPaths = []string{"photos/2019/07/IMG_2041.JPG", "docs/holiday notes é.txt", "archive/usb1/caf\xe9/r\xe9sum\xe9.doc"}

// BenchmarkNamesCodec: writing and reading the names through Name's codec, against the
// reference encoding/json on the same strings (which would turn the odd bytes into U+FFFD).
func BenchmarkNamesCodec(b *testing.B) {
	b.Run("name", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			for _, p := range benchPaths {
				buf = AppendName(buf[:0], p)
				if _, err := UnquoteName(buf); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			for _, p := range benchPaths {
				buf, _ := json.Marshal(p)
				var s string
				if err := json.Unmarshal(buf, &s); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkNamesDocument: a document's JSON round trip (its paths go through the codec).
func BenchmarkNamesDocument(b *testing.B) {
	d := Document{ID: "0123456789abcdef", Type: "text/plain", Size: 10, Version: CurrentVersion}
	for i, p := range benchPaths {
		d.Paths = append(d.Paths, PathEntry{Path: p, Mtime: float64(1700000000 + i)})
		d.PathsList = append(d.PathsList, p)
	}
	for b.Loop() {
		raw, err := json.Marshal(d)
		if err != nil {
			b.Fatal(err)
		}
		var back Document
		if err := json.Unmarshal(raw, &back); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDocumentUnmarshal: reading a document as an SDK worker reads each item (its core
// fields, module fields kept raw).
func BenchmarkDocumentUnmarshal(b *testing.B) {
	d := Document{ID: "0123456789abcdef", Type: "text/plain", Size: 10, Mtime: 1700000000.25, Next: "text",
		Copies: 3, Version: CurrentVersion, Fields: map[string]json.RawMessage{"media": json.RawMessage(`{"width":640}`)}}
	for i, p := range benchPaths {
		d.Paths = append(d.Paths, PathEntry{Path: p, Mtime: float64(1700000000 + i)})
		d.PathsList = append(d.PathsList, p)
	}
	raw, err := json.Marshal(d)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		var back Document
		if err := back.UnmarshalJSON(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDocumentMarshalFields: rendering a document whose module fields fill about 1.9 KB
// (EXIF-like strings with spaces), as every hop renders a document twice (document.json and
// the search index).
func BenchmarkDocumentMarshalFields(b *testing.B) {
	media := map[string]string{}
	for i := range 40 {
		media[fmt.Sprintf("exif_tag_%02d", i)] = fmt.Sprintf("value number %d with some text", i)
	}
	mb, err := json.Marshal(media)
	if err != nil {
		b.Fatal(err)
	}
	d := Document{ID: "0123456789abcdef", Type: "image/jpeg", Size: 10, Version: CurrentVersion,
		Paths: Paths{{Path: "a/b.jpg", Mtime: 1}}, PathsList: []string{"a/b.jpg"},
		Fields: map[string]json.RawMessage{"media": mb, "text": json.RawMessage(`{"language":"en","words":1234}`)}}
	for b.Loop() {
		if _, err := d.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}
