package search

import (
	"errors"
	"fmt"

	"github.com/homeindex/homeindex/internal/jsonvalid"
)

// appendJSONB appends the SQLite JSONB encoding (https://sqlite.org/jsonb.html) of the JSON
// text src to dst: byte for byte what SQLite's jsonb() returns for it. The facet columns are
// JSONB; encoding them here, where the upsert prepares its documents on every core, spares
// the index writer, which runs one statement at a time, a jsonb() call per column and row.
//
// src must be RFC 8259 JSON (what flatFacets writes); anything else is an error, as jsonb()
// would raise one, JSON5 included.
func appendJSONB(dst, src []byte) ([]byte, error) {
	e := jsonbEncoder{src: src, out: dst}
	e.space()
	if err := e.value(0); err != nil {
		return dst, err
	}
	e.space()
	if e.i != len(src) {
		return dst, e.errorf("text after the value")
	}
	return e.out, nil
}

// JSONB element types.
const (
	jsonbNull   = 0
	jsonbTrue   = 1
	jsonbFalse  = 2
	jsonbInt    = 3
	jsonbFloat  = 5
	jsonbText   = 7 // a string with no escapes
	jsonbTextJ  = 8 // a string with JSON escapes, kept as written
	jsonbArray  = 11
	jsonbObject = 12
)

// jsonbMaxDepth bounds nesting as SQLite's JSON_MAX_DEPTH does: 1000 containers deep.
const jsonbMaxDepth = 1000

type jsonbEncoder struct {
	src []byte
	i   int
	out []byte
}

var errJSONBSyntax = errors.New("jsonb: invalid JSON")

func (e *jsonbEncoder) errorf(what string) error {
	return fmt.Errorf("%w: %s at offset %d", errJSONBSyntax, what, e.i)
}

func (e *jsonbEncoder) space() { e.i = jsonvalid.SkipSpace(e.src, e.i) }

// appendJSONBHeader appends the header of an element of type typ whose payload is n bytes, in the
// smallest form that holds n.
func appendJSONBHeader(b []byte, typ byte, n int) []byte {
	switch {
	case n <= 11:
		return append(b, byte(n)<<4|typ)
	case n <= 0xff:
		return append(b, 0xc0|typ, byte(n))
	case n <= 0xffff:
		return append(b, 0xd0|typ, byte(n>>8), byte(n))
	default:
		return append(b, 0xe0|typ, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

func (e *jsonbEncoder) value(depth int) error {
	if e.i >= len(e.src) {
		return e.errorf("missing value")
	}
	switch c := e.src[e.i]; {
	case c == '{':
		return e.container(jsonbObject, '}', depth)
	case c == '[':
		return e.container(jsonbArray, ']', depth)
	case c == '"':
		return e.str()
	case c == '-' || c >= '0' && c <= '9':
		return e.number()
	default:
		for _, lit := range []struct {
			word string
			typ  byte
		}{{"true", jsonbTrue}, {"false", jsonbFalse}, {"null", jsonbNull}} {
			if len(e.src)-e.i >= len(lit.word) && string(e.src[e.i:e.i+len(lit.word)]) == lit.word {
				e.i += len(lit.word)
				e.out = append(e.out, lit.typ)
				return nil
			}
		}
		return e.errorf("unexpected character")
	}
}

// container encodes an object or array: its elements first, then the header in front of
// them once their size is known.
func (e *jsonbEncoder) container(typ, end byte, depth int) error {
	if depth >= jsonbMaxDepth {
		return e.errorf("nesting too deep")
	}
	e.i++ // { or [
	start := len(e.out)
	e.space()
	if e.i < len(e.src) && e.src[e.i] == end {
		e.i++
	} else {
		for {
			if typ == jsonbObject {
				if e.i >= len(e.src) || e.src[e.i] != '"' {
					return e.errorf("expected a key")
				}
				if err := e.str(); err != nil {
					return err
				}
				e.space()
				if e.i >= len(e.src) || e.src[e.i] != ':' {
					return e.errorf("expected :")
				}
				e.i++
				e.space()
			}
			if err := e.value(depth + 1); err != nil {
				return err
			}
			e.space()
			if e.i >= len(e.src) {
				return e.errorf("unterminated container")
			}
			if e.src[e.i] == end {
				e.i++
				break
			}
			if e.src[e.i] != ',' {
				return e.errorf("expected , or the end of the container")
			}
			e.i++
			e.space()
		}
	}
	n := len(e.out) - start
	var hdr [5]byte
	h := appendJSONBHeader(hdr[:0], typ, n)
	e.out = append(e.out, h...) // room for the header, then the elements move behind it
	copy(e.out[start+len(h):], e.out[start:start+n])
	copy(e.out[start:], h)
	return nil
}

// str encodes a string: TEXT when it has no escape, TEXTJ (the escaped text as written)
// when it has one.
func (e *jsonbEncoder) str() error {
	e.i++ // opening quote
	start, typ := e.i, byte(jsonbText)
	for {
		if e.i >= len(e.src) {
			return e.errorf("unterminated string")
		}
		c := e.src[e.i]
		switch {
		case c == '"':
			e.out = appendJSONBHeader(e.out, typ, e.i-start)
			e.out = append(e.out, e.src[start:e.i]...)
			e.i++
			return nil
		case c < 0x20:
			return e.errorf("control character in string")
		case c == '\\':
			typ = jsonbTextJ
			if e.i+1 >= len(e.src) {
				return e.errorf("unterminated escape")
			}
			switch e.src[e.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				e.i += 2
			case 'u':
				if e.i+6 > len(e.src) || !isHex4(e.src[e.i+2:e.i+6]) {
					return e.errorf("bad \\u escape")
				}
				e.i += 6
			default:
				return e.errorf("bad escape")
			}
		default:
			e.i++
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// number encodes an RFC 8259 number as its text: INT without fraction or exponent, FLOAT
// with either.
func (e *jsonbEncoder) number() error {
	start, typ := e.i, byte(jsonbInt)
	if e.src[e.i] == '-' {
		e.i++
	}
	digits := func() int {
		n := 0
		for e.i < len(e.src) && e.src[e.i] >= '0' && e.src[e.i] <= '9' {
			e.i++
			n++
		}
		return n
	}
	first := e.i
	switch n := digits(); {
	case n == 0:
		return e.errorf("number without digits")
	case n > 1 && e.src[first] == '0':
		return e.errorf("number with a leading zero")
	}
	if e.i < len(e.src) && e.src[e.i] == '.' {
		typ = jsonbFloat
		e.i++
		if digits() == 0 {
			return e.errorf("number without fraction digits")
		}
	}
	if e.i < len(e.src) && (e.src[e.i] == 'e' || e.src[e.i] == 'E') {
		typ = jsonbFloat
		e.i++
		if e.i < len(e.src) && (e.src[e.i] == '+' || e.src[e.i] == '-') {
			e.i++
		}
		if digits() == 0 {
			return e.errorf("number without exponent digits")
		}
	}
	e.out = appendJSONBHeader(e.out, typ, e.i-start)
	e.out = append(e.out, e.src[start:e.i]...)
	return nil
}
