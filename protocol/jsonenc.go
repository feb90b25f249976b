package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
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

// needsRewrite reports whether raw holds a byte json.Marshal would rewrite in a Marshaler's
// output: whitespace, <, >, &, or 0xe2, the lead byte of U+2028 and U+2029.
func needsRewrite(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r', '<', '>', '&', 0xe2:
			return true
		}
	}
	return false
}

// appendRaw appends a raw JSON value as json.Marshal rewrites a Marshaler's output: compact,
// with <, >, & and U+2028, U+2029 escaped. A value with none of these (the common case) is
// appended as it is; the others go through json.Compact, which also rejects invalid JSON.
func appendRaw(b []byte, field string, raw json.RawMessage) ([]byte, error) {
	if len(raw) > 0 && !needsRewrite(raw) {
		return append(b, raw...), nil
	}
	var compact, escaped bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	json.HTMLEscape(&escaped, compact.Bytes())
	return append(b, escaped.Bytes()...), nil
}
