package chunk

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// words returns "w0 w1 … w<n-1>" joined by sep.
func words(n int, sep string) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = fmt.Sprintf("w%d", i)
	}
	return strings.Join(ws, sep)
}

// firstLast returns the first and last word of a chunk's text.
func firstLast(text string) (string, string) {
	f := strings.Fields(text)
	return f[0], f[len(f)-1]
}

func TestChunksWindows(t *testing.T) {
	tests := []struct {
		words int
		opt   Options
		want  [][2]int // first and last word number of each window
	}{
		{0, DefaultOptions, nil},
		{1, DefaultOptions, [][2]int{{0, 0}}},
		{510, DefaultOptions, [][2]int{{0, 509}}},
		{511, DefaultOptions, [][2]int{{0, 509}, {460, 510}}},
		{970, DefaultOptions, [][2]int{{0, 509}, {460, 969}}},
		{971, DefaultOptions, [][2]int{{0, 509}, {460, 969}, {920, 970}}},
		{1200, DefaultOptions, [][2]int{{0, 509}, {460, 969}, {920, 1199}}},
		{7, Options{Tokens: 3, Overlap: 0}, [][2]int{{0, 2}, {3, 5}, {6, 6}}},
		{5, Options{Tokens: 3, Overlap: 2}, [][2]int{{0, 2}, {1, 3}, {2, 4}}},
		{3, Options{Tokens: 1, Overlap: 0}, [][2]int{{0, 0}, {1, 1}, {2, 2}}},
		{4, Options{Tokens: 4, Overlap: 1}, [][2]int{{0, 3}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d words %d-%d", tt.words, tt.opt.Tokens, tt.opt.Overlap), func(t *testing.T) {
			docs := Chunks("f", "m", 0, []Segment{{Text: words(tt.words, " ")}}, tt.opt)
			if len(docs) != len(tt.want) {
				t.Fatalf("got %d chunks, want %d", len(docs), len(tt.want))
			}
			for i, d := range docs {
				first, last := firstLast(d.Text)
				if want := [2]string{fmt.Sprintf("w%d", tt.want[i][0]), fmt.Sprintf("w%d", tt.want[i][1])}; [2]string{first, last} != want {
					t.Errorf("chunk %d spans %s..%s, want %s..%s", i, first, last, want[0], want[1])
				}
				if n := len(strings.Fields(d.Text)); n != tt.want[i][1]-tt.want[i][0]+1 {
					t.Errorf("chunk %d has %d words", i, n)
				}
			}
		})
	}
}

func TestChunksIDsAndIndex(t *testing.T) {
	segs := []Segment{
		{Text: words(1000, " "), Index: 0}, // 3 pieces
		{Text: "short", Index: 2},          // content[1] was skipped
		{Text: words(600, "\n"), Index: 3}, // 2 pieces
	}
	docs := Chunks("0123456789abcdef", "text-mod_1", 0, segs, DefaultOptions)
	wantIDs := []string{
		"text-mod_1_0123456789abcdef_0", "text-mod_1_0123456789abcdef_0_1", "text-mod_1_0123456789abcdef_0_2",
		"text-mod_1_0123456789abcdef_2",
		"text-mod_1_0123456789abcdef_3", "text-mod_1_0123456789abcdef_3_1",
	}
	wantSeg := []int{0, 0, 0, 2, 3, 3}
	if len(docs) != len(wantIDs) {
		t.Fatalf("got %d chunks, want %d", len(docs), len(wantIDs))
	}
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,511}$`)
	seen := map[string]bool{}
	for i, d := range docs {
		if d.ID != wantIDs[i] || d.Segment != wantSeg[i] || d.Index != i {
			t.Errorf("chunk %d: id %s segment %d index %d, want %s %d %d", i, d.ID, d.Segment, d.Index, wantIDs[i], wantSeg[i], i)
		}
		if !valid.MatchString(d.ID) {
			t.Errorf("id %q is not a valid Meilisearch id", d.ID)
		}
		if seen[d.ID] {
			t.Errorf("duplicate id %s", d.ID)
		}
		seen[d.ID] = true
		if d.FileID != "0123456789abcdef" || d.Module != "text-mod_1" {
			t.Errorf("chunk %d: file_id %q module %q", i, d.FileID, d.Module)
		}
	}
}

func TestChunksHandBuiltSegmentIndexes(t *testing.T) {
	// Segments built without Index (all 0) or out of order still get unique ids.
	segs := []Segment{{Text: "a"}, {Text: "b"}, {Text: "c", Index: 7}, {Text: "d", Index: 3}}
	docs := Chunks("f", "m", 0, segs, DefaultOptions)
	got := make([]string, len(docs))
	for i, d := range docs {
		got[i] = d.ID
	}
	if want := "m_f_0 m_f_1 m_f_7 m_f_8"; strings.Join(got, " ") != want {
		t.Errorf("ids %v, want %s", got, want)
	}
}

func TestChunksOffsetsRecoverText(t *testing.T) {
	texts := map[string]string{
		"ascii":       "  lead  " + words(1100, " \t ") + "\n\ntrail  ",
		"multibyte":   strings.Repeat("héllo wörld 日本語 テキスト 😀👍🏽 e\u0301 ", 300),
		"unicode sp":  strings.Repeat("a\u00a0b\u3000c\u2028d\u0085e\u2003f ", 400),
		"one word":    "😀",
		"no space":    strings.Repeat("x", 5000),
		"invalid utf": "ok \xff\xfe bad \xc3 end",
	}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			docs := Chunks("f", "m", 0, []Segment{{Text: text}}, Options{Tokens: 37, Overlap: 5})
			if len(docs) == 0 {
				t.Fatal("no chunks")
			}
			runes := []rune(text)
			for i, d := range docs {
				if d.CharOffset < 0 || d.CharOffset+d.CharLength > len(runes) {
					t.Fatalf("chunk %d: offset %d length %d outside %d code points", i, d.CharOffset, d.CharLength, len(runes))
				}
				if got := string(runes[d.CharOffset : d.CharOffset+d.CharLength]); got != string([]rune(d.Text)) {
					t.Errorf("chunk %d: runes[%d:+%d] = %q, text %q", i, d.CharOffset, d.CharLength, got, d.Text)
				}
				if !strings.Contains(text, d.Text) || strings.TrimSpace(d.Text) != d.Text {
					t.Errorf("chunk %d: text %q is not a trimmed substring of the segment", i, d.Text)
				}
			}
			if first, _ := firstLast(docs[0].Text); first != strings.Fields(text)[0] {
				t.Errorf("first chunk starts at %q", first)
			}
		})
	}
}

func TestChunksKeepsInnerWhitespace(t *testing.T) {
	text := "a \t b\n\nc"
	docs := Chunks("f", "m", 0, []Segment{{Text: "  " + text + " "}}, DefaultOptions)
	if len(docs) != 1 || docs[0].Text != text || docs[0].CharOffset != 2 || docs[0].CharLength != len(text) {
		t.Fatalf("got %+v", docs)
	}
}

func TestChunksFields(t *testing.T) {
	segs, err := ParseContent(json.RawMessage(`[
		{"text":"`+words(600, " ")+`","time_offset":12.5,"time_length":3,"page":4,"speaker":"ann",
		 "id":"evil","index":99,"file_id":"x","char_offset":-1},
		{"text":"no time","page":5},
		"plain"
	]`), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	docs := Chunks("f", "m", 1700000000, segs, DefaultOptions)
	if len(docs) != 4 {
		t.Fatalf("got %d chunks, want 4", len(docs))
	}
	var got []map[string]any
	for _, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	for i := 0; i < 2; i++ {
		m := got[i]
		if m["start_time"] != 1700000012.5 || m["time_offset"] != 12.5 || m["time_length"] != 3.0 ||
			m["page"] != 4.0 || m["speaker"] != "ann" {
			t.Errorf("chunk %d: %v", i, m)
		}
		if m["id"] == "evil" || m["index"] != float64(i) || m["file_id"] != "f" || m["char_offset"] == -1.0 {
			t.Errorf("chunk %d: a segment field overrode a core field: %v", i, m)
		}
	}
	if m := got[2]; m["start_time"] != 1700000000.0 || m["page"] != 5.0 || m["time_offset"] != nil {
		t.Errorf("chunk 2: %v", m)
	}
	if m := got[3]; m["start_time"] != 1700000000.0 || m["segment"] != 2.0 || len(m) != 9 {
		t.Errorf("chunk 3: %v (want exactly the 9 core keys)", m)
	}
}

func TestStartTimeFallbacks(t *testing.T) {
	tests := []struct {
		off  string
		want float64
	}{
		{`-2`, 8},
		{`1e3`, 1010},
		{`"x"`, 10},      // not a number (hand-built segment)
		{`1e308`, 1e308}, // finite sum
	}
	for _, tt := range tests {
		if got := startTime(10, map[string]json.RawMessage{"time_offset": json.RawMessage(tt.off)}); got != tt.want {
			t.Errorf("startTime(10, %s) = %v, want %v", tt.off, got, tt.want)
		}
	}
	if got := startTime(1e308, map[string]json.RawMessage{"time_offset": json.RawMessage(`1e308`)}); got != 1e308 {
		t.Errorf("overflowing start_time = %v, want mtime", got)
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		in, want Options
		valid    bool
	}{
		{DefaultOptions, DefaultOptions, true},
		{Options{Tokens: 1}, Options{Tokens: 1}, true},
		{Options{}, Options{Tokens: DefaultTokens}, false},
		{Options{Tokens: -3, Overlap: 2}, Options{Tokens: DefaultTokens, Overlap: 2}, false},
		{Options{Tokens: 10, Overlap: -1}, Options{Tokens: 10}, false},
		{Options{Tokens: 10, Overlap: 10}, Options{Tokens: 10, Overlap: 9}, false},
		{Options{Tokens: 10, Overlap: 50}, Options{Tokens: 10, Overlap: 9}, false},
	}
	for _, tt := range tests {
		if got := tt.in.normalized(); got != tt.want {
			t.Errorf("%+v.normalized() = %+v, want %+v", tt.in, got, tt.want)
		}
		if err := tt.in.Validate(); (err == nil) != tt.valid {
			t.Errorf("%+v.Validate() = %v, want valid %v", tt.in, err, tt.valid)
		}
		// Invalid options still chunk everything.
		docs := Chunks("f", "m", 0, []Segment{{Text: words(30, " ")}}, tt.in)
		if len(docs) == 0 || !strings.HasSuffix(docs[len(docs)-1].Text, "w29") {
			t.Errorf("%+v: content lost: %d chunks", tt.in, len(docs))
		}
	}
}
