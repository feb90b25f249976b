package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// scanLimits bound what scanPayload accepts.
type scanLimits struct {
	maxDepth  int // containers open at once; the payload object is depth 1
	maxValues int // JSON values of every kind, containers included
}

// errTruncated reports JSON that ends before its value does.
var errTruncated = errors.New("truncated JSON")

// scanPayload checks a payload before anything decodes it: valid UTF-8, one JSON object, no
// container nested deeper than maxDepth, at most maxValues values, and no key twice in any
// object (Go keeps the last duplicate, Python too, other readers the first: a duplicate could
// smuggle a different id or field past one of them). It allocates only for keys, so a
// 10M-element array costs a pass over its bytes and stops at maxValues. It returns the
// payload's top-level keys.
func scanPayload(data []byte, lim scanLimits) (top keySet, err error) {
	if !utf8.Valid(data) {
		return top, errors.New("invalid UTF-8")
	}
	s := scanner{data: data, lim: lim}
	s.ws()
	if s.pos >= len(data) {
		return top, errors.New("empty payload")
	}
	if data[s.pos] != '{' {
		return top, fmt.Errorf("want a JSON object, found %s", s.describe())
	}
	if err := s.value(0); err != nil {
		return top, err
	}
	s.ws()
	if s.pos < len(data) {
		return top, fmt.Errorf("data after the JSON object at byte %d", s.pos)
	}
	return s.top, nil
}

type scanner struct {
	data   []byte
	pos    int
	values int
	lim    scanLimits
	top    keySet // the keys of the payload object
}

// describe names what is at pos, for error messages.
func (s *scanner) describe() string {
	if s.pos >= len(s.data) {
		return "the end"
	}
	r, _ := utf8.DecodeRune(s.data[s.pos:])
	return fmt.Sprintf("%q at byte %d", r, s.pos)
}

func (s *scanner) unexpected() error {
	if s.pos >= len(s.data) {
		return errTruncated
	}
	return fmt.Errorf("invalid JSON: unexpected %s", s.describe())
}

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value scans one value at pos; depth is the number of containers around it. Recursion is
// bounded by maxDepth, checked before each container is entered.
func (s *scanner) value(depth int) error {
	s.values++
	if s.values > s.lim.maxValues {
		return fmt.Errorf("more than %d JSON values", s.lim.maxValues)
	}
	s.ws()
	if s.pos >= len(s.data) {
		return errTruncated
	}
	switch c := s.data[s.pos]; {
	case c == '{' || c == '[':
		if depth+1 > s.lim.maxDepth {
			return fmt.Errorf("nesting deeper than %d", s.lim.maxDepth)
		}
		if c == '{' {
			return s.object(depth + 1)
		}
		return s.array(depth + 1)
	case c == '"':
		_, err := s.str(false)
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return s.unexpected()
}

func (s *scanner) object(depth int) error {
	s.pos++ // '{'
	var keys keySet
	s.ws()
	if depth == 1 {
		defer func() { s.top = keys }()
	}
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		s.ws()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.unexpected()
		}
		at := s.pos
		key, err := s.str(true)
		if err != nil {
			return err
		}
		if !keys.add(key) {
			return fmt.Errorf("duplicate key %s at byte %d", clip(string(key), 64), at)
		}
		s.ws()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.unexpected()
		}
		s.pos++
		if err := s.value(depth); err != nil {
			return err
		}
		s.ws()
		if s.pos >= len(s.data) {
			return errTruncated
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.unexpected()
		}
	}
}

func (s *scanner) array(depth int) error {
	s.pos++ // '['
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for {
		if err := s.value(depth); err != nil {
			return err
		}
		s.ws()
		if s.pos >= len(s.data) {
			return errTruncated
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.unexpected()
		}
	}
}

// str scans a string at pos. With key, it returns the decoded text (a sub-slice of the input
// when the string has no escapes), so "\u0069d" and "id" compare equal.
func (s *scanner) str(key bool) ([]byte, error) {
	start := s.pos
	s.pos++ // '"'
	escaped := false
	for {
		if s.pos >= len(s.data) {
			return nil, errTruncated
		}
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			if !key {
				return nil, nil
			}
			if !escaped {
				return s.data[start+1 : s.pos-1], nil
			}
			var k string
			if err := json.Unmarshal(s.data[start:s.pos], &k); err != nil {
				return nil, fmt.Errorf("invalid JSON: key at byte %d: %w", start, err)
			}
			return []byte(k), nil
		case c == '\\':
			escaped = true
			if s.pos+1 >= len(s.data) {
				return nil, errTruncated
			}
			switch s.data[s.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos += 2
			case 'u':
				if s.pos+6 > len(s.data) {
					return nil, errTruncated
				}
				for _, h := range s.data[s.pos+2 : s.pos+6] {
					if !isHex(h) {
						return nil, fmt.Errorf("invalid JSON: bad \\u escape at byte %d", s.pos)
					}
				}
				s.pos += 6
			default:
				return nil, fmt.Errorf("invalid JSON: bad escape at byte %d", s.pos)
			}
		case c < 0x20:
			return nil, fmt.Errorf("invalid JSON: control character in string at byte %d", s.pos)
		default:
			s.pos++ // UTF-8 was validated for the whole payload
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (s *scanner) literal(word string) error {
	end := s.pos + len(word)
	if end > len(s.data) {
		if string(s.data[s.pos:]) == word[:len(s.data)-s.pos] {
			return errTruncated
		}
		return s.unexpected()
	}
	if string(s.data[s.pos:end]) != word {
		return s.unexpected()
	}
	s.pos = end
	return nil
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() error {
	if s.data[s.pos] == '-' {
		s.pos++
	}
	if s.pos >= len(s.data) {
		return errTruncated
	}
	switch c := s.data[s.pos]; {
	case c == '0':
		s.pos++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		return s.unexpected()
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if s.digits() == 0 {
			return s.unexpected()
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			return s.unexpected()
		}
	}
	return nil
}

func (s *scanner) digits() int {
	n := 0
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
		n++
	}
	return n
}

// keySet holds one object's keys: a slice while small (most objects), a map beyond.
type keySet struct {
	small [][]byte
	big   map[string]struct{}
}

const keySetSmall = 16

// has reports whether k is in the set.
func (ks *keySet) has(k string) bool {
	if ks.big != nil {
		_, ok := ks.big[k]
		return ok
	}
	for _, o := range ks.small {
		if string(o) == k {
			return true
		}
	}
	return false
}

// add records k and reports false when it was already there.
func (ks *keySet) add(k []byte) bool {
	if ks.big != nil {
		if _, dup := ks.big[string(k)]; dup {
			return false
		}
		ks.big[string(k)] = struct{}{}
		return true
	}
	for _, o := range ks.small {
		if string(o) == string(k) {
			return false
		}
	}
	if len(ks.small) < keySetSmall {
		ks.small = append(ks.small, k)
		return true
	}
	ks.big = make(map[string]struct{}, 2*keySetSmall)
	for _, o := range ks.small {
		ks.big[string(o)] = struct{}{}
	}
	ks.small = nil
	ks.big[string(k)] = struct{}{}
	return true
}

// clip quotes s, cut to at most n bytes (on a rune boundary) with "…" when cut: for reasons
// and logs that quote untrusted text.
func clip(s string, n int) string {
	return fmt.Sprintf("%q", cut(s, n))
}

// cut returns s cut to at most n bytes on a rune boundary, with "…" when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
