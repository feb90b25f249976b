package chunk

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseContent(t *testing.T) {
	raw := func(s string) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name string
		in   string
		want []Segment
	}{
		{"string", `"hello world"`, []Segment{{Text: "hello world"}}},
		{"empty string", `""`, nil},
		{"blank string", `" \n\t "`, nil},
		{"empty array", `[]`, []Segment{}},
		{"strings", `["a b", "", "c", "   "]`, []Segment{{Text: "a b", Index: 0}, {Text: "c", Index: 2}}},
		{
			"segments with time and page",
			`[{"text":"one","time_offset":1.5,"time_length":2},{"text":"two","page":3,"speaker":"x"}]`,
			[]Segment{
				{Text: "one", Index: 0, Fields: raw(`{"time_offset":1.5,"time_length":2}`)},
				{Text: "two", Index: 1, Fields: raw(`{"page":3,"speaker":"x"}`)},
			},
		},
		{
			"mixed",
			`["plain", {"text":"obj","page":1}, {"page":2}, {"text":null}, {"text":""}, "last"]`,
			[]Segment{
				{Text: "plain", Index: 0},
				{Text: "obj", Index: 1, Fields: raw(`{"page":1}`)},
				{Text: "last", Index: 5},
			},
		},
		{"text only object", `[{"text":"x"}]`, []Segment{{Text: "x"}}},
		{"null time fields dropped", `[{"text":"x","time_offset":null,"time_length":null}]`, []Segment{{Text: "x"}}},
		{"unicode", `["h\u00e9llo \ud83d\ude00"]`, []Segment{{Text: "héllo 😀"}}},
		{"leading whitespace", " \n[\"a\"]", []Segment{{Text: "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseContent(json.RawMessage(tt.in), DefaultLimits)
			if err != nil {
				t.Fatalf("ParseContent(%s): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseContent(%s) =\n%#v\nwant\n%#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseContentErrors(t *testing.T) {
	tests := []struct {
		name, in string
		lim      Limits
		is       error
		msg      string
	}{
		{"number", `42`, DefaultLimits, ErrInvalidContent, "content must be a string or an array, found number"},
		{"object", `{"text":"x"}`, DefaultLimits, ErrInvalidContent, "found object"},
		{"null", `null`, DefaultLimits, ErrInvalidContent, "found null"},
		{"boolean", `true`, DefaultLimits, ErrInvalidContent, "found boolean"},
		{"empty", ``, DefaultLimits, ErrInvalidContent, "found nothing"},
		{"garbage", `hello`, DefaultLimits, ErrInvalidContent, "found invalid JSON"},
		{"truncated array", `["a", "b"`, DefaultLimits, ErrInvalidContent, "content:"},
		{"trailing data", `"a" "b"`, DefaultLimits, ErrInvalidContent, "content:"},
		{"nested array", `["a", ["b"]]`, DefaultLimits, ErrInvalidContent, `content[1] must be a string or an object with "text", found array`},
		{"number item", `["a", 1]`, DefaultLimits, ErrInvalidContent, "content[1] must be a string or an object with \"text\", found number"},
		{"null item", `[null]`, DefaultLimits, ErrInvalidContent, "content[0] must be a string or an object with \"text\", found null"},
		{"text number", `[{"text":5}]`, DefaultLimits, ErrInvalidContent, "content[0].text must be a string, found number"},
		{"text object", `["x", {"text":{"a":1}}]`, DefaultLimits, ErrInvalidContent, "content[1].text must be a string, found object"},
		{"time_offset string", `[{"text":"x","time_offset":"1"}]`, DefaultLimits, ErrInvalidContent, "content[0].time_offset must be a number, found string"},
		{"time_length bool", `[{"text":"x","time_length":true}]`, DefaultLimits, ErrInvalidContent, "content[0].time_length must be a number, found boolean"},
		{"too many segments", `["a","b","c"]`, Limits{MaxSegments: 2}, ErrContentTooLarge, "3 segments, limit 2"},
		{"too many bytes", `"abcdefgh"`, Limits{MaxBytes: 5}, ErrContentTooLarge, "10 bytes, limit 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseContent(json.RawMessage(tt.in), tt.lim)
			if err == nil {
				t.Fatalf("ParseContent(%s) = %#v, want an error", tt.in, got)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("error %q does not wrap %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
		})
	}
}

func TestParseContentLimitsAtBound(t *testing.T) {
	in := `["a","b"]`
	if _, err := ParseContent(json.RawMessage(in), Limits{MaxSegments: 2, MaxBytes: len(in)}); err != nil {
		t.Fatalf("content exactly at the limits: %v", err)
	}
	if _, err := ParseContent(json.RawMessage(in), Limits{}); err != nil {
		t.Fatalf("zero limits mean no limit: %v", err)
	}
}
