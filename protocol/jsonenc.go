package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/homeindex/homeindex/internal/jsonvalid"
)

// This file writes JSON as json.Marshal does (compact; <, >, & and U+2028, U+2029 escaped),
// by hand for the document, which every module hop renders twice (document.json and the
// search index).

// AppendJSONNumber appends x as encoding/json writes a float64: the shortest form, with an
// exponent below 1e-6 and from 1e21. x must be finite.
func AppendJSONNumber(b []byte, x float64) []byte {
	format := byte('f')
	if abs := math.Abs(x); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, x, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendFloat is AppendJSONNumber, with json.Marshal's error for a value JSON cannot hold.
func appendFloat(b []byte, field string, x float64) ([]byte, error) {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil, fmt.Errorf("%s: json: unsupported value: %s", field, strconv.FormatFloat(x, 'g', -1, 64))
	}
	return AppendJSONNumber(b, x), nil
}

// appendKey appends a core field's key (plain ASCII), after a comma when more is set.
func appendKey(b []byte, key string, more bool) []byte {
	if more {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// htmlSafe reports whether s, as a JSON string, needs no escape at all.
func htmlSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c >= utf8.RuneSelf, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// appendJSONString appends s as json.Marshal writes a string.
func appendJSONString(b []byte, s string) []byte {
	if htmlSafe(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// appendHTMLSafeName appends a name as AppendName writes it, with <, > and & escaped as
// json.Marshal escapes them in a Marshaler's output.
func appendHTMLSafeName(b []byte, name string) []byte {
	if htmlSafe(name) {
		b = append(b, '"')
		b = append(b, name...)
		return append(b, '"')
	}
	start := len(b)
	b = AppendName(b, name)
	if bytes.ContainsAny(b[start:], "<>&") {
		var buf bytes.Buffer
		json.HTMLEscape(&buf, b[start:])
		b = append(b[:start], buf.Bytes()...)
	}
	return b
}

// Rewrites reports what json.Marshal would rewrite in raw, a Marshaler's output: compact,
// whitespace between tokens (json.Compact removes it); escape, a <, > or & or a U+2028 or
// U+2029 (json.HTMLEscape escapes them). Spaces inside strings stay as they are (paths, names,
// text and EXIF fields are full of them), so only whitespace outside strings counts: the scan
// follows the quotes and their escapes. For valid JSON the answer is exact; for anything else
// it is some answer, and the caller's check of the JSON says what is wrong.
func Rewrites(raw []byte) (compact, escape bool) {
	inString, escaped := false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !rewriteBytes[c] && !escaped {
			continue // most bytes: letters, digits, punctuation that means nothing here
		}
		switch {
		case c == '<' || c == '>' || c == '&':
			escape = true
		case c == 0xe2: // U+2028 and U+2029 are e2 80 a8 and e2 80 a9
			if i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xa8 || raw[i+2] == 0xa9) {
				escape = true
			}
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			compact = true
		}
		if compact && escape {
			break
		}
	}
	return compact, escape
}

// rewriteBytes marks the bytes Rewrites looks at.
var rewriteBytes = func() (t [256]bool) {
	for _, c := range []byte("\"\\<>& \t\n\r\xe2") {
		t[c] = true
	}
	return t
}()

// appendRaw appends a raw JSON value as json.Marshal rewrites a Marshaler's output
// (AsMarshaled); field names the value in the error.
func appendRaw(b []byte, field string, raw json.RawMessage) ([]byte, error) {
	out, err := AsMarshaled(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return append(b, out...), nil
}

// AsMarshaled returns raw as json.Marshal writes a Marshaler's output: compact, with <, >, &
// and U+2028, U+2029 escaped. A value with none of these to change (the common case, spaces
// inside strings included: Rewrites) is returned as it is; the others go through json.Compact,
// which also rejects invalid JSON, and json.HTMLEscape.
func AsMarshaled(raw []byte) ([]byte, error) {
	if compact, escape := Rewrites(raw); len(raw) > 0 && !compact && !escape {
		return raw, nil
	}
	var compact, escaped bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, err
	}
	json.HTMLEscape(&escaped, compact.Bytes())
	return escaped.Bytes(), nil
}

// SetMembers returns the JSON object obj with set's members added or replaced (a member's value
// is replaced whole), written as json.Marshal writes a map[string]json.RawMessage: keys sorted,
// compact, <, > and & escaped. obj is "" or a JSON object; a key it repeats counts once, with
// its last value, as json.Unmarshal into a map keeps it. It is the same as decoding obj into a
// map, setting set's members and marshalling the map, without decoding or re-checking the
// members that stay, nearly all of them when a module's result is merged into a document's
// fields.
func SetMembers(obj string, set map[string]json.RawMessage) (string, error) {
	m := make(map[string]json.RawMessage, len(set)+8)
	if obj != "" {
		err := EachMember([]byte(obj), func(k string, v json.RawMessage) error {
			m[k] = v // a repeated key: the last one counts
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	for k, v := range set {
		if v == nil {
			v = json.RawMessage("null") // as json.RawMessage's MarshalJSON writes nil
		}
		if !jsonvalid.Valid(v) {
			return "", fmt.Errorf("member %q: invalid JSON", k)
		}
		m[k] = v
	}
	b := make([]byte, 0, len(obj)+64)
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendRaw(b, k, m[k]); err != nil {
			return "", err
		}
	}
	return string(append(b, '}')), nil
}
