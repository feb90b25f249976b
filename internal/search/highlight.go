package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// snippetWords is the number of words a snippet shows.
const snippetWords = 24

// isTextRune splits text into words the way the FTS5 unicode61 tokenizer does.
func isTextRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) || unicode.In(r, unicode.Co)
}

// queryWords returns the words of a query and whether the last one matches as a prefix (the
// query does not end with a space).
func queryWords(q string) ([]string, bool) {
	words := strings.FieldsFunc(q, func(r rune) bool { return !isTextRune(r) })
	for i, w := range words {
		words[i] = fold(w)
	}
	prefix := false
	if len(words) > 0 {
		r, _ := utf8.DecodeLastRuneInString(q)
		prefix = !unicode.IsSpace(r)
	}
	return words, prefix
}

// fold lower-cases a word and removes the diacritics of Latin letters, so "Ça" matches "ca"
// as the index does.
func fold(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if f, ok := foldTable[r]; ok {
			b.WriteString(f)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var foldTable = func() map[rune]string {
	m := map[rune]string{}
	for base, accented := range map[string]string{
		"a": "àáâãäåāăą", "c": "çćĉċč", "d": "ďđ", "e": "èéêëēĕėęě", "g": "ĝğġģ", "h": "ĥħ",
		"i": "ìíîïĩīĭįı", "j": "ĵ", "k": "ķ", "l": "ĺļľŀł", "n": "ñńņňŉ", "o": "òóôõöøōŏő",
		"r": "ŕŗř", "s": "śŝşš", "t": "ţťŧ", "u": "ùúûüũūŭůűų", "w": "ŵ", "y": "ýÿŷ", "z": "źżž",
		"ae": "æ", "oe": "œ", "ss": "ß",
	} {
		for _, r := range accented {
			m[r] = base
		}
	}
	return m
}()

type span struct{ b, e int } // byte offsets of a word

// highlight cuts the part of text around the first matching word into parts: at most n
// words, starting a few words before the first match, with "…" where text was left out.
// With no matching word it shows the first n words.
func highlight(text string, words []string, prefixLast bool, n int) []Part {
	var spans []span
	start := -1
	for i, r := range text {
		if isTextRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			spans = append(spans, span{start, i})
			start = -1
		}
	}
	if start >= 0 {
		spans = append(spans, span{start, len(text)})
	}
	if len(spans) == 0 {
		return nil
	}
	match := make([]bool, len(spans))
	first := -1
	for i, s := range spans {
		w := fold(text[s.b:s.e])
		for j, q := range words {
			if w == q || prefixLast && j == len(words)-1 && strings.HasPrefix(w, q) {
				match[i] = true
				break
			}
		}
		if match[i] && first < 0 {
			first = i
		}
	}
	lo := 0
	if first > n/4 {
		lo = first - n/4
	}
	hi := min(len(spans), lo+n)
	var parts []Part
	add := func(s string, m bool) {
		if s == "" {
			return
		}
		if k := len(parts) - 1; k >= 0 && parts[k].Match == m {
			parts[k].Text += s
			return
		}
		parts = append(parts, Part{Text: s, Match: m})
	}
	if lo > 0 {
		add("…", false)
	}
	pos := spans[lo].b
	if lo == 0 {
		pos = 0 // keep what comes before the first word
	}
	for i := lo; i < hi; i++ {
		s := spans[i]
		add(text[pos:s.b], false)
		add(text[s.b:s.e], match[i])
		pos = s.e
	}
	if hi < len(spans) {
		add("…", false)
	} else {
		add(text[pos:], false)
	}
	return parts
}
