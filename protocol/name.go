package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/homeindex/homeindex/internal/jsonvalid"
)

// Name is a file name or relative path as the file system holds it: any bytes, not necessarily
// UTF-8. In JSON it travels the way CPython's os.fsdecode plus json.dumps write it (PEP 383):
// valid UTF-8 as characters, and every byte that is not part of valid UTF-8 as a lone
// surrogate escape \udc80 to \udcff. json.loads plus os.fsencode give the same bytes back, so a
// Python module opens the right file, and UnmarshalJSON does the same for Go.
//
// encoding/json on a plain string would turn both forms into U+FFFD, so every JSON path field
// (document paths, paths_list, queue items, done messages) goes through Name.
type Name string

// MarshalJSON writes n as a JSON string, its invalid bytes as \udcXX escapes.
func (n Name) MarshalJSON() ([]byte, error) { return AppendName(nil, string(n)), nil }

// UnmarshalJSON reads a JSON string, turning \udc80-\udcff escapes back into bytes.
func (n *Name) UnmarshalJSON(data []byte) error {
	s, err := UnquoteName(data)
	if err != nil {
		return err
	}
	*n = Name(s)
	return nil
}

// String returns the bytes as they are.
func (n Name) String() string { return string(n) }

// Display returns n as valid UTF-8 for people and for search engines that take only Unicode:
// each byte that is not part of valid UTF-8 becomes one U+FFFD, exactly what encoding/json makes
// of the \udcXX escape that carries it. It is for showing, never for opening.
func (n Name) Display() string { return DisplayName(string(n)) }

// DisplayName is Name(s).Display().
func DisplayName(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	return b.String()
}

// LineName returns s for line-based output (terminal lines, text logs, reports): Display, with
// control characters written as escapes (\n, \t, \x1b...) and backslashes doubled, so a name
// holding a newline stays on one line and cannot be mistaken for two entries.
func LineName(s string) string {
	d := DisplayName(s)
	clean := true
	for i := 0; i < len(d); i++ {
		if c := d[i]; c < 0x20 || c == 0x7f || c == '\\' {
			clean = false
			break
		}
	}
	if clean {
		return d
	}
	var b strings.Builder
	for i := 0; i < len(d); i++ {
		switch c := d[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(c)>>4, 16) + strconv.FormatUint(uint64(c)&0xf, 16))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// AppendName appends s to dst as a JSON string literal: valid UTF-8 as it is (control
// characters, '"' and '\' escaped; U+2028 and U+2029 escaped as encoding/json does), every
// other byte b as the escape \udcXX of the surrogate U+DC00+b.
func AppendName(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', 'd', 'c', hexDigits[c>>4], hexDigits[c&0xf])
			i++
			start = i
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += w
			start = i
		default:
			i += w
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// ErrBadName reports a JSON string that cannot be a file name: a lone surrogate that no byte
// maps to (a high surrogate, or \udc00-\udc7f), which os.fsencode refuses too.
var ErrBadName = errors.New("invalid name")

// UnquoteName reads a JSON string literal (quotes included) into the bytes it names: escapes
// are decoded as JSON says, a surrogate pair gives its character, and a lone \udc80-\udcff gives
// the byte 0x80-0xff (PEP 383). Raw bytes inside the literal stand for themselves.
func UnquoteName(lit []byte) (string, error) {
	lit = bytes.TrimSpace(lit)
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", fmt.Errorf("%w: want a JSON string, got %.40q", ErrBadName, lit)
	}
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		if bytes.IndexByte(body, '"') >= 0 {
			return "", fmt.Errorf("%w: unescaped quote", ErrBadName)
		}
		return string(body), nil
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c == '"' {
			return "", fmt.Errorf("%w: unescaped quote", ErrBadName)
		}
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(body) {
			return "", fmt.Errorf("%w: truncated escape", ErrBadName)
		}
		switch e := body[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'u':
			r, ok := Hex4(body[i+2:])
			if !ok {
				return "", fmt.Errorf("%w: bad \\u escape", ErrBadName)
			}
			i += 6
			switch {
			case r >= 0xd800 && r < 0xdc00:
				if r2, ok := Hex4(body[min(i+2, len(body)):]); ok && i+1 < len(body) && body[i] == '\\' && body[i+1] == 'u' && r2 >= 0xdc00 && r2 < 0xe000 {
					out = utf8.AppendRune(out, utf16.DecodeRune(r, r2))
					i += 6
					continue
				}
				return "", fmt.Errorf("%w: lone high surrogate \\u%04x", ErrBadName, r)
			case r >= 0xdc80 && r <= 0xdcff:
				out = append(out, byte(r-0xdc00))
			case r >= 0xdc00 && r < 0xe000:
				return "", fmt.Errorf("%w: lone surrogate \\u%04x stands for no byte", ErrBadName, r)
			default:
				out = utf8.AppendRune(out, r)
			}
			continue
		default:
			return "", fmt.Errorf("%w: bad escape \\%c", ErrBadName, e)
		}
		i += 2
	}
	return string(out), nil
}

// Hex4 reads the four hex digits that follow a JSON \u (either case); ok is false when b is
// shorter or holds another byte.
func Hex4(b []byte) (rune, bool) { return jsonvalid.Hex4(b) }

// nameList is a []string of names in JSON (paths_list).
type nameList []string

func (l nameList) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendName(b, s)
	}
	return append(b, ']'), nil
}

// scanValidNames reads valid JSON holding an array of names in one pass; ok is false for
// anything else (nameList.UnmarshalJSON then says what is wrong).
func scanValidNames(data []byte) (_ []string, ok bool) {
	i := jsonvalid.SkipSpace(data, 0)
	if data[i] != '[' {
		return nil, false
	}
	out := []string{}
	if i = jsonvalid.SkipSpace(data, i+1); data[i] == ']' {
		return out, true
	}
	for {
		end := jsonvalid.SkipValue(data, i)
		s, err := UnquoteName(data[i:end])
		if err != nil {
			return nil, false
		}
		out = append(out, s)
		if i = jsonvalid.SkipSpace(data, end); data[i] == ']' {
			return out, true
		}
		i = jsonvalid.SkipSpace(data, i+1)
	}
}

func (l *nameList) UnmarshalJSON(data []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	out := make(nameList, 0, len(raw))
	for _, r := range raw {
		s, err := UnquoteName(r)
		if err != nil {
			return err
		}
		out = append(out, s)
	}
	*l = out
	return nil
}
