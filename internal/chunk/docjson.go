package chunk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Core keys of a chunk document, in the order MarshalJSON writes them.
const (
	keyID         = "id"
	keyFileID     = "file_id"
	keyModule     = "module"
	keyText       = "text"
	keyIndex      = "index"
	keySegment    = "segment"
	keyStartTime  = "start_time"
	keyCharOffset = "char_offset"
	keyCharLength = "char_length"
)

// isCoreKey reports whether a key belongs to the chunk itself; a segment field of that name
// would contradict the chunk, so it is not encoded.
func isCoreKey(k string) bool {
	switch k {
	case keyID, keyFileID, keyModule, keyText, keyIndex, keySegment, keyStartTime, keyCharOffset, keyCharLength:
		return true
	}
	return false
}

// MarshalJSON encodes the chunk with core keys first (id, file_id, module, text, index,
// segment, start_time, char_offset, char_length), then the segment's fields sorted by key.
// The output is compact; calling it directly rather than through json.Marshal skips
// encoding/json's second pass over the bytes.
func (d Doc) MarshalJSON() ([]byte, error) {
	start, err := json.Marshal(d.StartTime)
	if err != nil {
		return nil, fmt.Errorf("chunk %s: start_time: %w", d.ID, err)
	}
	b := make([]byte, 0, len(d.Text)+len(d.ID)+len(d.FileID)+len(d.Module)+160)
	b = append(b, '{')
	b = appendString(b, keyID, d.ID)
	b = appendString(append(b, ','), keyFileID, d.FileID)
	b = appendString(append(b, ','), keyModule, d.Module)
	b = appendString(append(b, ','), keyText, d.Text)
	b = appendInt(b, keyIndex, d.Index)
	b = appendInt(b, keySegment, d.Segment)
	b = append(append(b, `,"`+keyStartTime+`":`...), start...)
	b = appendInt(b, keyCharOffset, d.CharOffset)
	b = appendInt(b, keyCharLength, d.CharLength)
	keys := make([]string, 0, len(d.Fields))
	for k := range d.Fields {
		if !isCoreKey(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		buf := bytes.NewBuffer(append(appendQuoted(append(b, ','), k), ':'))
		if err := json.Compact(buf, d.Fields[k]); err != nil {
			return nil, fmt.Errorf("chunk %s: field %q: %w", d.ID, k, err)
		}
		b = buf.Bytes()
	}
	return append(b, '}'), nil
}

// appendString appends "key":"v" to b.
func appendString(b []byte, key, v string) []byte {
	return appendQuoted(append(appendQuoted(b, key), ':'), v)
}

// appendQuoted appends s as a JSON string. Marshalling a string cannot fail.
func appendQuoted(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// appendInt appends ,"key":n to b.
func appendInt(b []byte, key string, n int) []byte {
	b = append(append(append(b, ',', '"'), key...), '"', ':')
	return strconv.AppendInt(b, int64(n), 10)
}

// UnmarshalJSON decodes a chunk document written by MarshalJSON (chunks.json): core keys into
// their fields, every other key into Fields.
func (d *Doc) UnmarshalJSON(data []byte) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("chunk document: %w", err)
	}
	*d = Doc{}
	targets := map[string]any{
		keyID: &d.ID, keyFileID: &d.FileID, keyModule: &d.Module, keyText: &d.Text,
		keyIndex: &d.Index, keySegment: &d.Segment, keyStartTime: &d.StartTime,
		keyCharOffset: &d.CharOffset, keyCharLength: &d.CharLength,
	}
	for k, v := range obj {
		if t, ok := targets[k]; ok {
			if err := json.Unmarshal(v, t); err != nil {
				return fmt.Errorf("chunk document: %s: %w", k, err)
			}
			continue
		}
		if d.Fields == nil {
			d.Fields = map[string]json.RawMessage{}
		}
		d.Fields[k] = v
	}
	return nil
}
