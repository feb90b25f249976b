package chunk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/homeindex/homeindex/internal/jsonvalid"
)

// Segment is one piece of module content: text plus extra fields (time_offset, time_length,
// page, speaker…) kept on every chunk made from it.
type Segment struct {
	Text string
	// Fields are the segment object's keys other than "text", as raw JSON; nil for a string
	// segment. time_offset and time_length, when present, are JSON numbers.
	Fields map[string]json.RawMessage
	// Index is the segment's position in the content array (0 for a string content). It
	// survives skipped segments, so chunk ids and the chunk's "segment" field point back into
	// content.json.
	Index int
}

// Limits bound what ParseContent accepts. Zero means no limit.
type Limits struct {
	MaxSegments int // items in a content array, skipped ones included
	MaxBytes    int // bytes of the encoded content
}

// DefaultLimits is generous for transcripts and OCR of large documents, and small enough that
// one bad result cannot exhaust memory.
var DefaultLimits = Limits{MaxSegments: 200_000, MaxBytes: 64 << 20}

var (
	// ErrInvalidContent reports content of the wrong shape; the wrapping error says where.
	ErrInvalidContent = errors.New("invalid content")
	// ErrContentTooLarge reports content over the Limits.
	ErrContentTooLarge = errors.New("content too large")
)

// timeFields are the segment keys that must hold numbers: start_time is computed from them.
var timeFields = [...]string{"time_offset", "time_length"}

// ParseContent accepts a JSON string, an array of strings, or an array of objects with "text"
// (other keys kept as Fields), mixed arrays too; anything else is an error wrapping
// ErrInvalidContent that names what is wrong ("content[3].text must be a string, found
// number"). Segments whose text is missing, null, empty or only whitespace are skipped;
// a null time_offset or time_length is dropped. JSON null content is an error too: the caller
// decides what an absent content means before calling. Content over lim is an error wrapping
// ErrContentTooLarge.
func ParseContent(raw json.RawMessage, lim Limits) ([]Segment, error) {
	if lim.MaxBytes > 0 && len(raw) > lim.MaxBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrContentTooLarge, len(raw), lim.MaxBytes)
	}
	switch kind := jsonKind(raw); kind {
	case "string":
		var s string
		if err := jsonvalid.UnmarshalString(raw, &s); err != nil {
			return nil, fmt.Errorf("%w: content: %w", ErrInvalidContent, err)
		}
		if isBlank(s) {
			return nil, nil
		}
		return []Segment{{Text: s}}, nil
	case "array":
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("%w: content: %w", ErrInvalidContent, err)
		}
		if lim.MaxSegments > 0 && len(items) > lim.MaxSegments {
			return nil, fmt.Errorf("%w: %d segments, limit %d", ErrContentTooLarge, len(items), lim.MaxSegments)
		}
		segs := make([]Segment, 0, len(items))
		for i, item := range items {
			seg, ok, err := parseItem(i, item)
			if err != nil {
				return nil, err
			}
			if ok {
				segs = append(segs, seg)
			}
		}
		return segs, nil
	default:
		return nil, fmt.Errorf("%w: content must be a string or an array, found %s", ErrInvalidContent, kind)
	}
}

// parseItem parses content[i]; ok is false for a segment without text.
func parseItem(i int, item json.RawMessage) (seg Segment, ok bool, err error) {
	seg.Index = i
	switch kind := jsonKind(item); kind {
	case "string":
		if err := jsonvalid.UnmarshalString(item, &seg.Text); err != nil {
			return seg, false, fmt.Errorf("%w: content[%d]: %w", ErrInvalidContent, i, err)
		}
	case "object":
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(item, &obj); err != nil {
			return seg, false, fmt.Errorf("%w: content[%d]: %w", ErrInvalidContent, i, err)
		}
		text, has := obj["text"]
		delete(obj, "text")
		if has {
			switch k := jsonKind(text); k {
			case "null":
			case "string":
				if err := jsonvalid.UnmarshalString(text, &seg.Text); err != nil {
					return seg, false, fmt.Errorf("%w: content[%d].text: %w", ErrInvalidContent, i, err)
				}
			default:
				return seg, false, fmt.Errorf("%w: content[%d].text must be a string, found %s", ErrInvalidContent, i, k)
			}
		}
		for _, name := range timeFields {
			v, has := obj[name]
			if !has {
				continue
			}
			switch k := jsonKind(v); k {
			case "number":
			case "null":
				delete(obj, name)
			default:
				return seg, false, fmt.Errorf("%w: content[%d].%s must be a number, found %s", ErrInvalidContent, i, name, k)
			}
		}
		if len(obj) > 0 {
			seg.Fields = obj
		}
	default:
		return seg, false, fmt.Errorf("%w: content[%d] must be a string or an object with \"text\", found %s", ErrInvalidContent, i, kind)
	}
	return seg, !isBlank(seg.Text), nil
}

// jsonKind names the JSON type of v from its first byte, for error messages and dispatch.
// It does not validate v; json.Unmarshal does that.
func jsonKind(v []byte) string {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return "nothing"
	}
	switch c := v[0]; {
	case c == '"':
		return "string"
	case c == '[':
		return "array"
	case c == '{':
		return "object"
	case c == 'n':
		return "null"
	case c == 't' || c == 'f':
		return "boolean"
	case c == '-' || c >= '0' && c <= '9':
		return "number"
	default:
		return "invalid JSON"
	}
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
