package chunk

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchText returns about n bytes of words of varied length, some multi-byte, with mixed
// whitespace: a stand-in for OCR or transcript text.
func benchText(n int) string {
	vocab := []string{"the", "quick", "brown", "fox", "jumps", "über", "naïve", "日本語", "données", "a",
		"transcription", "of", "page", "😀", "and", "segment"}
	seps := []string{" ", " ", " ", "\n", "  ", "\t"}
	var sb strings.Builder
	sb.Grow(n + 32)
	for i := 0; sb.Len() < n; i++ {
		sb.WriteString(vocab[(i*7+i/3)%len(vocab)])
		sb.WriteString(seps[i%len(seps)])
	}
	return sb.String()
}

// BenchmarkChunks chunks 10 MB of text, as one segment and as 20 000 transcript segments.
func BenchmarkChunks(b *testing.B) {
	const size = 10 << 20
	text := benchText(size)
	var many []Segment
	for i, per := 0, len(text)/20000; i < 20000; i++ {
		many = append(many, Segment{Text: text[i*per : (i+1)*per], Index: i,
			Fields: map[string]json.RawMessage{"time_offset": json.RawMessage("12.5")}})
	}
	cases := []struct {
		name string
		segs []Segment
	}{
		{"one segment", []Segment{{Text: text}}},
		{"20k segments", many},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if docs := Chunks("0123456789abcdef", "read", 1.7e9, c.segs, DefaultOptions); len(docs) == 0 {
					b.Fatal("no chunks")
				}
			}
		})
	}
}

// BenchmarkParseChunkEncode is the merger's whole path for 10 MB of content: parse, chunk and
// encode every chunk document for the index.
func BenchmarkParseChunkEncode(b *testing.B) {
	const size = 10 << 20
	raw, err := json.Marshal(benchText(size))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		segs, err := ParseContent(raw, DefaultLimits)
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range Chunks("0123456789abcdef", "read", 1.7e9, segs, DefaultOptions) {
			if _, err := json.Marshal(d); err != nil {
				b.Fatal(err)
			}
		}
	}
}
