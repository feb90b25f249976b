// Package jsonvalid reports whether bytes are valid JSON, with the answer encoding/json.Valid
// gives and about a quarter of its CPU.
//
// Every document a first sync writes is checked several times on its way (the document file's
// indentation, the index's decoding, the protocol's member scanner, the paths reader), and
// every module result and queue item once: encoding/json's scanner, a state machine that
// calls a function per byte, took 4% of a first sync's user-space instructions doing it. This
// is a loop per token instead, and strings, which are most of a document's bytes, are crossed
// a table lookup per byte. FuzzValidMatchesEncodingJSON holds it to encoding/json's answer,
// the nesting limit included.
//
// Beside the check, the readers of JSON already known valid step over values (SkipValue,
// StringEnd) and decode string literals (Unquote, UnmarshalString) here, each held to
// encoding/json's answers by a fuzz target.
package jsonvalid

import "bytes"

// maxDepth is encoding/json's nesting limit: deeper input is invalid there, so here too.
const maxDepth = 10000

// stringStop marks the bytes that end a run of plain string bytes: the quote, the backslash
// and the control characters, which JSON does not allow unescaped. Bytes of 0x80 and up pass
// as they are, as in encoding/json (which does not check UTF-8 when it validates).
var stringStop = func() (t [256]bool) {
	for b := range 0x20 {
		t[b] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// Valid reports whether data is one JSON value, with only whitespace around it: what
// encoding/json.Valid reports for the same bytes.
func Valid(data []byte) bool {
	// open holds an entry per enclosing container, true for an object: on the stack for the
	// first 512 levels, on the heap beyond (encoding/json allows 10,000).
	var stack [512]bool
	open := stack[:0]

	i := SkipSpace(data, 0)
	for {
		// A value starts at i.
		if i >= len(data) {
			return false
		}
		switch c := data[i]; c {
		case '{':
			if len(open) >= maxDepth { // an empty one counts too, as in encoding/json
				return false
			}
			if i = SkipSpace(data, i+1); i < len(data) && data[i] == '}' {
				i++
				break // an empty object is a whole value
			}
			open = append(open, true)
			// A key, then its value.
			if i = member(data, i); i < 0 {
				return false
			}
			continue
		case '[':
			if len(open) >= maxDepth {
				return false
			}
			if i = SkipSpace(data, i+1); i < len(data) && data[i] == ']' {
				i++
				break
			}
			open = append(open, false)
			continue
		case '"':
			if i = str(data, i); i < 0 {
				return false
			}
		case 't':
			if i = literal(data, i, "true"); i < 0 {
				return false
			}
		case 'f':
			if i = literal(data, i, "false"); i < 0 {
				return false
			}
		case 'n':
			if i = literal(data, i, "null"); i < 0 {
				return false
			}
		default:
			if c != '-' && (c < '0' || c > '9') {
				return false
			}
			if i = number(data, i); i < 0 {
				return false
			}
		}
		// A value ended before i: close the containers it ends, then expect the next one.
		for {
			i = SkipSpace(data, i)
			if len(open) == 0 {
				return i == len(data)
			}
			if i >= len(data) {
				return false
			}
			obj := open[len(open)-1]
			c := data[i]
			if c == ',' {
				if i = SkipSpace(data, i+1); obj {
					if i = member(data, i); i < 0 {
						return false
					}
				}
				break // the next value
			}
			if obj && c == '}' || !obj && c == ']' {
				open = open[:len(open)-1]
				i++
				continue
			}
			return false
		}
	}
}

// member reads an object member's key and colon at i and returns where its value starts after
// any whitespace, or -1.
func member(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = str(data, i); i < 0 {
		return -1
	}
	if i = SkipSpace(data, i); i >= len(data) || data[i] != ':' {
		return -1
	}
	return SkipSpace(data, i+1)
}

// SkipSpace returns the index of the first byte at or after i in data that is not JSON
// whitespace (len(data) if none): the readers of valid JSON here step over it with this.
func SkipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// SkipValue returns the end of the valid JSON value starting at data[i]: the readers of
// valid JSON here step over a value with this.
func SkipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		end, _ := StringEnd(data, i)
		return end
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch data[i] {
			case '"':
				i = SkipValue(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	default: // a number, true, false or null
		for ; i < len(data); i++ {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}

// StringEnd returns the end of the valid JSON string literal whose opening quote is at
// data[i] (the index after its closing quote), and whether it holds an escape. Quotes and
// backslashes are found with bytes.IndexByte, many bytes at a time: module text makes long
// strings, with an escape every line or so.
func StringEnd(data []byte, i int) (end int, escaped bool) {
	for from := i + 1; ; {
		q := from + bytes.IndexByte(data[from:], '"')
		// The quote ends the string unless an odd run of backslashes escapes it.
		run := 0
		for p := q - 1; data[p] == '\\'; p-- {
			run++
		}
		if run%2 == 0 {
			return q + 1, escaped || bytes.IndexByte(data[from:q], '\\') >= 0
		}
		escaped = true
		from = q + 1
	}
}

// str reads the string whose opening quote is at i and returns the index after its closing
// quote, or -1.
func str(data []byte, i int) int {
	i++
	for {
		for i < len(data) && !stringStop[data[i]] {
			i++
		}
		if i >= len(data) {
			return -1
		}
		switch data[i] {
		case '"':
			return i + 1
		case '\\':
			i++
			if i >= len(data) {
				return -1
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if len(data)-i < 5 {
					return -1
				}
				for _, h := range data[i+1 : i+5] {
					if !isHex(h) {
						return -1
					}
				}
				i += 5
			default:
				return -1
			}
		default: // a control character
			return -1
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// literal reads word (true, false or null) at i and returns the index after it, or -1.
func literal(data []byte, i int, word string) int {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// number reads a number at i: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, and returns the
// index after it, or -1.
func number(data []byte, i int) int {
	if data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return -1
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		i = digits(data, i+1)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// digits returns the index of the first byte at or after i that is not a decimal digit.
func digits(data []byte, i int) int {
	for i < len(data) && '0' <= data[i] && data[i] <= '9' {
		i++
	}
	return i
}
