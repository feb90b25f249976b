package text

import (
	"strings"
	"time"
	"unicode"

	"github.com/homeindex/homeindex/sdk"
)

// stopwords are frequent short words of a few languages; the language whose words are most
// frequent in the first part of the text wins (at least 5 hits, and clearly ahead).
var stopwords = map[string][]string{
	"en": strings.Fields("the and of to in is that it for was with as on are be this by not have from"),
	"fr": strings.Fields("le la les et des est une un du dans que qui pour pas sur au avec ce sont"),
	"de": strings.Fields("der die und das ist nicht den mit von sich des ein eine auf dem zu für auch"),
	"es": strings.Fields("el la los las y de que en es por una con para del se al lo como"),
	"it": strings.Fields("il la che di e per una sono non con del della gli le dei nel anche"),
	"pt": strings.Fields("o a os as e de que em um uma para com não do da dos das se"),
	"nl": strings.Fields("de het een en van is dat niet op te voor met zijn er maar ook"),
}

var stopIndex = func() map[string][]string {
	idx := map[string][]string{}
	for lang, ws := range stopwords {
		for _, w := range ws {
			idx[w] = append(idx[w], lang)
		}
	}
	return idx
}()

// guessLanguage names the language of the text's first 64 KB, "" when unsure.
func guessLanguage(segs sdk.Segments) string {
	score := map[string]int{}
	budget := 64 << 10
	for _, s := range segs {
		t := s.Text
		if len(t) > budget {
			t = t[:budget]
		}
		budget -= len(t)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) }) {
			for _, lang := range stopIndex[w] {
				score[lang]++
			}
		}
		if budget <= 0 {
			break
		}
	}
	best, second := "", 0
	for lang, n := range score {
		if best == "" || n > score[best] || (n == score[best] && lang < best) {
			if best != "" {
				second = max(second, score[best])
			}
			best = lang
		} else {
			second = max(second, n)
		}
	}
	if best == "" || score[best] < 5 || score[best]*2 < second*3 {
		return ""
	}
	return best
}

// normLanguage turns a language tag ("en-US", "EN_gb", "fr") into its primary subtag, lower case.
func normLanguage(tag string) string {
	tag = strings.ToLower(strings.TrimSpace(tag))
	if i := strings.IndexAny(tag, "-_"); i > 0 {
		tag = tag[:i]
	}
	for _, r := range tag {
		if r < 'a' || r > 'z' {
			return ""
		}
	}
	if len(tag) < 2 || len(tag) > 3 {
		return ""
	}
	return tag
}

// parseDate reads the dates found in document metadata: RFC 3339 / ISO 8601 (W3CDTF in OOXML,
// ODF and EPUB, with or without a zone, or a bare date) and PDF dates (D:YYYYMMDDHHmmSSOHH'mm').
// A time without a zone is taken as UTC. The zero time means unreadable.
func parseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "D:") || (len(s) >= 14 && isDigits(s[:14])) {
		return parsePDFDate(strings.TrimPrefix(s, "D:"))
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02", "2006-01", "2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return sane(t)
		}
	}
	return time.Time{}
}

// parsePDFDate reads YYYY[MM[DD[HH[mm[SS]]]]][Z|+HH'mm'|-HH'mm'].
func parsePDFDate(s string) time.Time {
	num := func(i, n, def int) int {
		if len(s) < i+n || !isDigits(s[i:i+n]) {
			return def
		}
		v := 0
		for _, c := range s[i : i+n] {
			v = v*10 + int(c-'0')
		}
		return v
	}
	if len(s) < 4 || !isDigits(s[:4]) {
		return time.Time{}
	}
	y, mo, d, h, mi, se := num(0, 4, 0), num(4, 2, 1), num(6, 2, 1), num(8, 2, 0), num(10, 2, 0), num(12, 2, 0)
	loc := time.UTC
	rest := s
	for i := 4; i < len(s) && i <= 14; i++ {
		if !isDigits(s[i : i+1]) {
			rest = s[i:]
			break
		}
		rest = ""
	}
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		tz := strings.NewReplacer("'", "", ":", "").Replace(rest[1:])
		if len(tz) >= 2 && isDigits(tz[:2]) {
			off := int(tz[0]-'0')*10 + int(tz[1]-'0')
			off *= 3600
			if len(tz) >= 4 && isDigits(tz[2:4]) {
				off += (int(tz[2]-'0')*10 + int(tz[3]-'0')) * 60
			}
			if rest[0] == '-' {
				off = -off
			}
			loc = time.FixedZone("", off)
		}
	}
	return sane(time.Date(y, time.Month(mo), d, h, mi, se, 0, loc))
}

// sane drops dates no document has (before 1970 is allowed back to 1900; after 2200 is junk).
func sane(t time.Time) time.Time {
	if t.Year() < 1900 || t.Year() > 2200 {
		return time.Time{}
	}
	return t
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
