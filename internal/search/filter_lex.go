package search

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is the lexer of the Meilisearch filter subset; filter_parse.go builds the AST and
// filter_sql.go compiles it for the embedded backend.

type tokKind int

const (
	tokEOF    tokKind = iota
	tokWord           // bare word: a value, an attribute or a keyword
	tokString         // quoted string ('…' or "…", backslash escapes the quote)
	tokOp             // = != > >= < <=
	tokLParen
	tokRParen
	tokLBracket
	tokRBracket
	tokComma
)

type token struct {
	kind tokKind
	text string // unquoted text for tokString
	pos  int    // byte offset in the filter, for messages
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of filter"
	case tokString:
		return fmt.Sprintf("%q", t.text)
	default:
		return "`" + t.text + "`"
	}
}

// isWordRune is Meilisearch's bare-value alphabet: letters, digits, '_', '-' and '.'.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.'
}

// lex splits a filter into tokens.
func lex(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			i += size
		case r == '(':
			toks = append(toks, token{tokLParen, "(", i})
			i++
		case r == ')':
			toks = append(toks, token{tokRParen, ")", i})
			i++
		case r == '[':
			toks = append(toks, token{tokLBracket, "[", i})
			i++
		case r == ']':
			toks = append(toks, token{tokRBracket, "]", i})
			i++
		case r == ',':
			toks = append(toks, token{tokComma, ",", i})
			i++
		case r == '=':
			toks = append(toks, token{tokOp, "=", i})
			i++
		case r == '!' || r == '<' || r == '>':
			if i+1 < len(s) && s[i+1] == '=' {
				toks = append(toks, token{tokOp, s[i : i+2], i})
				i += 2
				continue
			}
			if r == '!' {
				return nil, fmt.Errorf("unexpected `!` at offset %d (did you mean `!=`?)", i)
			}
			toks = append(toks, token{tokOp, string(r), i})
			i++
		case r == '\'' || r == '"':
			text, n, err := lexQuoted(s[i:], byte(r))
			if err != nil {
				return nil, fmt.Errorf("at offset %d: %w", i, err)
			}
			toks = append(toks, token{tokString, text, i})
			i += n
		case isWordRune(r):
			j := i
			for j < len(s) {
				r2, size2 := utf8.DecodeRuneInString(s[j:])
				if !isWordRune(r2) {
					break
				}
				j += size2
			}
			toks = append(toks, token{tokWord, s[i:j], i})
			i = j
		default:
			return nil, fmt.Errorf("unexpected character %q at offset %d (quote values that contain it)", r, i)
		}
	}
	return append(toks, token{kind: tokEOF, pos: len(s)}), nil
}

// lexQuoted reads a quoted string starting at s[0] == q. A backslash before the quote
// character escapes it; every other backslash is kept as is (as Meilisearch does).
func lexQuoted(s string, q byte) (text string, n int, err error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == q:
			b.WriteByte(q)
			i++
		case s[i] == q:
			return b.String(), i + 1, nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", 0, fmt.Errorf("unterminated quoted value %s", s)
}
