package search

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/homeindex/homeindex/protocol"
)

// FieldPathsExact is the index-only field that keeps a document's exact path bytes when some
// path is not valid UTF-8: the base64 (standard, padded) of each `paths` key, in `paths` order.
//
// Documents carry such bytes as PEP 383 lone surrogates (\udcXX, see protocol.Name), which
// Meilisearch refuses (one such document fails its whole batch). So the index stores every
// string in display form (each lone surrogate becomes U+FFFD, which is also what any JSON
// reader shows), and paths_exact beside it; hits are given back with their exact paths, the
// field removed, on both backends. The embedded backend leaves it out of its full-text index.
const FieldPathsExact = "paths_exact"

// indexForm returns a compact document as the index stores it: lone surrogate escapes and
// invalid UTF-8 bytes in strings replaced by U+FFFD, plus FieldPathsExact when a path needed
// it. Documents without either come back as they are (the common case costs one scan);
// rewritten says the document went through the rewrite instead, which copies it even when
// nothing in it changes (a valid surrogate pair).
func indexForm(raw []byte) (form []byte, rewritten bool, err error) {
	if !needsDisplay(raw) {
		return raw, false, nil
	}
	var doc struct {
		Paths   protocol.Paths `json:"paths"`
		Entries []struct {
			Path protocol.Name `json:"path"`
		} `json:"path_entries"` // the files index's array form of paths (files.go)
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, false, fmt.Errorf("paths: %w", err)
	}
	for _, e := range doc.Entries {
		doc.Paths = append(doc.Paths, protocol.PathEntry{Path: string(e.Path)})
	}
	out := displayJSON(raw)
	exact := false
	for _, p := range doc.Paths {
		exact = exact || !utf8.ValidString(p.Path)
	}
	if !exact || len(out) < 2 || out[len(out)-1] != '}' {
		return out, true, nil
	}
	b := append([]byte{}, out[:len(out)-1]...)
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = append(b, `"`+FieldPathsExact+`":[`...)
	for i, p := range doc.Paths {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, []byte(p.Path))
		b = append(b, '"')
	}
	return append(b, ']', '}'), true, nil
}

// needsDisplay reports whether raw holds a \uD800-\uDFFF escape or a byte that is not UTF-8.
func needsDisplay(raw []byte) bool {
	if !utf8.Valid(raw) {
		return true
	}
	for i := bytes.IndexByte(raw, '\\'); i >= 0 && i+2 < len(raw); {
		if raw[i+1] == 'u' && (raw[i+2] == 'd' || raw[i+2] == 'D') {
			return true
		}
		j := bytes.IndexByte(raw[i+2:], '\\')
		if j < 0 {
			break
		}
		i += 2 + j
	}
	return false
}

// displayJSON rewrites JSON text: inside strings, a surrogate escape that is not half of a
// pair, and each byte that is not part of valid UTF-8, becomes \ufffd. Everything else is
// copied as it is.
func displayJSON(raw []byte) []byte {
	out := make([]byte, 0, len(raw)+16)
	inString := false
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case !inString:
			inString = c == '"'
			out = append(out, c)
			i++
		case c == '"':
			inString = false
			out = append(out, c)
			i++
		case c == '\\' && i+1 < len(raw) && raw[i+1] == 'u':
			r, ok := protocol.Hex4(raw[i+2:])
			switch {
			case !ok || r < 0xd800 || r > 0xdfff:
				out = append(out, raw[i:min(i+6, len(raw))]...)
				i += 6
			case r < 0xdc00 && i+11 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' && isLow(raw[i+8:]):
				out = append(out, raw[i:i+12]...)
				i += 12
			default:
				out = append(out, `\ufffd`...)
				i += 6
			}
		case c == '\\' && i+1 < len(raw):
			out = append(out, c, raw[i+1])
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, w := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && w == 1 {
				out = append(out, `\ufffd`...)
			} else {
				out = append(out, raw[i:i+w]...)
			}
			i += w
		}
	}
	return out
}

func isLow(b []byte) bool {
	r, ok := protocol.Hex4(b)
	return ok && r >= 0xdc00 && r <= 0xdfff
}

// exactHits gives hits their exact paths back (exactHit) in place.
func exactHits(hits []json.RawMessage) {
	for i, h := range hits {
		hits[i] = exactHit(h)
	}
}

// exactHit undoes indexForm's path changes on a stored document: `paths` and `paths_list` get
// their exact names back (as \udcXX escapes, which protocol.Paths reads as the real bytes) and
// FieldPathsExact goes. A hit without the field, or one that does not parse, is returned as
// it is. Each display name is matched to the next unused exact name with that display, so
// order is kept even when two names show alike.
func exactHit(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte(`"`+FieldPathsExact+`"`)) {
		return raw
	}
	var members []member
	var exact []string
	var shown protocol.Paths
	var list []string
	var entries []pathEntry
	err := protocol.EachMember(raw, func(k string, v json.RawMessage) error {
		switch k {
		case FieldPathsExact:
			var enc []string
			if err := json.Unmarshal(v, &enc); err != nil {
				return err
			}
			for _, e := range enc {
				b, err := base64.StdEncoding.DecodeString(e)
				if err != nil {
					return err
				}
				exact = append(exact, string(b))
			}
			return nil
		case protocol.FieldPaths:
			if err := json.Unmarshal(v, &shown); err != nil {
				return err
			}
		case protocol.FieldPathsList:
			if err := json.Unmarshal(v, &list); err != nil {
				return err
			}
		case fieldPathEntries:
			if err := json.Unmarshal(v, &entries); err != nil {
				return err
			}
		}
		members = append(members, member{k, v})
		return nil
	})
	if err != nil {
		return raw
	}
	take := func(display string, used []bool) (string, bool) {
		for i, e := range exact {
			if !used[i] && protocol.DisplayName(e) == display {
				used[i] = true
				return e, true
			}
		}
		return "", false
	}
	out := []byte{'{'}
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = protocol.AppendName(out, m.key)
		out = append(out, ':')
		switch m.key {
		case protocol.FieldPaths:
			used := make([]bool, len(exact))
			var fixed protocol.Paths
			for _, p := range shown {
				if e, ok := take(p.Path, used); ok {
					p.Path = e
				}
				fixed = append(fixed, p)
			}
			// Names that showed alike collapsed into one display key: they come back too.
			for j, e := range exact {
				if !used[j] {
					mt := 0.0
					for _, p := range shown {
						if p.Path == protocol.DisplayName(e) {
							mt = p.Mtime
						}
					}
					fixed = append(fixed, protocol.PathEntry{Path: e, Mtime: mt})
				}
			}
			b, _ := fixed.MarshalJSON()
			out = append(out, b...)
		case fieldPathEntries:
			// Stored in the same order as paths_exact was written (indexForm).
			for j := range entries {
				if j < len(exact) {
					entries[j].Path = exact[j]
				}
			}
			out = append(out, pathEntriesJSON(entries)...)
		case protocol.FieldPathsList:
			used := make([]bool, len(exact))
			out = append(out, '[')
			for j, s := range list {
				if e, ok := take(s, used); ok {
					s = e
				}
				if j > 0 {
					out = append(out, ',')
				}
				out = protocol.AppendName(out, s)
			}
			out = append(out, ']')
		default:
			out = append(out, m.value...)
		}
	}
	return append(out, '}')
}

type member struct {
	key   string
	value json.RawMessage
}
