package jsonvalid

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Unquote returns the string that the JSON string literal lit (its quotes included) holds, as
// json.Unmarshal decodes it into a Go string: escapes decoded, a surrogate pair joined into its
// character, a lone surrogate and every byte of invalid UTF-8 replaced by U+FFFD. ok is false
// when lit is not a valid literal; callers then ask encoding/json, which says what is wrong.
//
// Why not json.Unmarshal: module text is full of escapes (every line break is a \n), and the
// index decodes each chunk's text; encoding/json validates the literal again, goes through
// reflection and copies twice. FuzzUnquoteMatchesEncodingJSON holds this to its answers.
func Unquote(lit []byte) (s string, ok bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	body := lit[1 : len(lit)-1]
	// Ids, types and most names have nothing to decode: their text is the body as it stands.
	plain := literalRun(body, 0)
	if plain == len(body) {
		return string(body), true
	}
	var b strings.Builder
	// Decoding never lengthens the text, but for invalid UTF-8 (a byte becomes three).
	b.Grow(len(body))
	b.Write(body[:plain])
	for i := plain; i < len(body); {
		c := body[i]
		switch {
		case !stringStop[c]:
			j := literalRun(body, i)
			if j == i { // a byte of invalid UTF-8
				b.WriteRune(utf8.RuneError)
				i++
				continue
			}
			b.Write(body[i:j])
			i = j
		case c != '\\' || i+1 == len(body):
			return "", false // a quote or a control character inside, or a final backslash
		default:
			e := body[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := Hex4(body[i:])
				if !ok {
					return "", false
				}
				i += 4
				if utf16.IsSurrogate(r) {
					// A pair only if a \u escape of the other half follows; otherwise the
					// half alone is U+FFFD, and what follows is read on its own.
					if r2, ok := uEscape(body[i:]); ok {
						if pair := utf16.DecodeRune(r, r2); pair != unicode.ReplacementChar {
							b.WriteRune(pair)
							i += 6
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				b.WriteRune(r)
			default:
				return "", false
			}
		}
	}
	return b.String(), true
}

// literalRun returns the end of the run of bytes from body[i] that stand for themselves in a
// literal: anything but a quote, a backslash or a control character, and UTF-8 only where it
// is valid.
func literalRun(body []byte, i int) int {
	for {
		for i < len(body) && body[i] < utf8.RuneSelf && !stringStop[body[i]] {
			i++
		}
		if i == len(body) || body[i] < utf8.RuneSelf {
			return i // the end, or a stop
		}
		r, size := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
}

// UnmarshalString is json.Unmarshal(v, dst) for a string destination: Unquote when v is a
// string literal, encoding/json for anything else (null, other kinds, invalid input), so every
// error and odd input behaves as with json.Unmarshal.
func UnmarshalString(v []byte, dst *string) error {
	if s, ok := Unquote(v); ok {
		*dst = s
		return nil
	}
	return json.Unmarshal(v, dst)
}

// uEscape reads a \u escape at the start of b.
func uEscape(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	return Hex4(b[2:])
}

// Hex4 reads four hex digits (either case) at the start of b: those of a \u escape.
func Hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
