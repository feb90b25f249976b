package text

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// JSON, XML and HTML: read as a stream of tokens (no tree is built), at most MaxPlainBytes of
// the file, nesting bounded by MaxDepth.
func init() {
	register(&format{name: "json", read: readJSON})
	register(&format{name: "xml", read: readXML})
	register(&format{name: "html", read: readHTML})
}

// errTooDeep is returned when nesting exceeds Limits.MaxDepth.
type errTooDeep struct {
	what string
	max  int
}

func (e errTooDeep) Error() string {
	return fmt.Sprintf("%s nested deeper than %d levels", e.what, e.max)
}

// prefix returns src limited to MaxPlainBytes, noting a cut in d.
func prefix(src *source, d *Doc) io.Reader {
	if src.size > src.lim.MaxPlainBytes {
		d.Truncated = fmt.Sprintf("read the first %d of %d bytes", src.lim.MaxPlainBytes, src.size)
	}
	return io.LimitReader(src, src.lim.MaxPlainBytes)
}

// readJSON keeps every string, one per line: values, and keys too (json.Decoder does not tell
// them apart, and keys such as "title" or "description" are words people search for).
// Numbers and literals are structure.
func readJSON(ctx context.Context, src *source, d *Doc) error {
	dec := json.NewDecoder(prefix(src, d))
	depth := 0
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if d.Truncated != "" || len(d.Segments) > 0 || d.cur.Len() > 0 {
				return nil // a cut or damaged tail: keep what was read
			}
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				if depth++; depth > src.lim.MaxDepth {
					return errTooDeep{"JSON", src.lim.MaxDepth}
				}
			} else {
				depth--
			}
		case string:
			if d.write(t+"\n") != nil {
				return nil
			}
		}
	}
}

// newXMLDecoder is a lenient decoder that reads any charset the declaration names.
// Long character data is split (see runSplitter) so no token holds more than maxRun bytes.
func newXMLDecoder(r io.Reader) *xml.Decoder {
	dec := xml.NewDecoder(&runSplitter{r: r})
	dec.Strict = false
	dec.AutoClose = xml.HTMLAutoClose
	dec.Entity = xml.HTMLEntity
	dec.CharsetReader = charset.NewReaderLabel
	return dec
}

// readXML keeps character data, a line per element end.
func readXML(ctx context.Context, src *source, d *Doc) error {
	return xmlText(ctx, newXMLDecoder(prefix(src, d)), d, src.lim.MaxDepth, nil)
}

// xmlText writes the character data of dec's tokens into d. onStart, if set, sees each start
// element first and may return skip to drop the element's content, or a separator to write.
func xmlText(ctx context.Context, dec *xml.Decoder, d *Doc, maxDepth int, onStart func(xml.StartElement) (skip bool)) error {
	depth, skipAt := 0, -1
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if d.cur.Len() > 0 || len(d.Segments) > 0 {
				return nil // damaged tail: keep what was read
			}
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxDepth {
				return errTooDeep{"XML", maxDepth}
			}
			if skipAt < 0 && onStart != nil && onStart(t) {
				skipAt = depth
			}
		case xml.EndElement:
			if depth == skipAt {
				skipAt = -1
			}
			depth--
			if skipAt < 0 && d.newline() != nil {
				return nil
			}
		case xml.CharData:
			if skipAt >= 0 {
				continue
			}
			if s := strings.TrimSpace(string(t)); s != "" {
				if d.space() != nil || d.write(s) != nil {
					return nil
				}
			}
		}
	}
}

// readHTML keeps the visible text, the title and the author (meta name=author), and the
// language (html lang). Script, style, template and noscript content is dropped.
func readHTML(ctx context.Context, src *source, d *Doc) error {
	r, err := charset.NewReader(prefix(src, d), "")
	if err != nil {
		return err
	}
	title, err := htmlText(ctx, r, d, true)
	if d.Title == "" {
		d.Title = title
	}
	return err
}

// hidden elements hold no visible text; block elements end a line.
var (
	hidden = map[string]bool{"script": true, "style": true, "template": true, "noscript": true, "head": false, "svg": true, "math": false, "object": true, "iframe": true}
	block  = map[string]bool{"p": true, "div": true, "br": true, "li": true, "tr": true, "td": true, "th": true,
		"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "section": true, "article": true,
		"header": true, "footer": true, "nav": true, "aside": true, "blockquote": true, "pre": true, "table": true,
		"ul": true, "ol": true, "dl": true, "dt": true, "dd": true, "hr": true, "figure": true, "figcaption": true,
		"title": true, "main": true, "address": true, "caption": true, "form": true, "fieldset": true, "legend": true}
)

// htmlText writes r's visible HTML text into d and returns the document's <title>; with meta
// it also fills the author and the language when they are not set yet.
func htmlText(ctx context.Context, r io.Reader, d *Doc, meta bool) (string, error) {
	z := html.NewTokenizer(r)
	z.SetMaxBuf(4 << 20) // one token larger than this is an error, not an allocation
	skip := ""           // the hidden element being skipped
	inTitle := false
	var title strings.Builder
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			err := z.Err()
			switch {
			case errors.Is(err, io.EOF):
				return title.String(), nil
			case errors.Is(err, html.ErrBufferExceeded) && d.hasText():
				d.Truncated = "an HTML token over 4 MB: the text after it is dropped"
				return title.String(), nil
			}
			return title.String(), err
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			if skip != "" {
				continue
			}
			if hidden[tag] && tt == html.StartTagToken {
				skip = tag
				continue
			}
			if tag == "title" && tt == html.StartTagToken {
				inTitle = true
				continue
			}
			if hasAttr && meta && (tag == "meta" || tag == "html") {
				attrs := map[string]string{}
				for more := true; more; {
					var k, v []byte
					k, v, more = z.TagAttr()
					attrs[strings.ToLower(string(k))] = string(v)
				}
				switch {
				case tag == "html" && d.Language == "":
					d.Language = attrs["lang"]
				case tag == "meta" && strings.EqualFold(attrs["name"], "author") && d.Author == "":
					d.Author = attrs["content"]
				case tag == "meta" && strings.EqualFold(attrs["name"], "dc.language") && d.Language == "":
					d.Language = attrs["content"]
				}
			}
			if block[tag] && d.newline() != nil {
				return title.String(), nil
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			tag := string(name)
			if skip != "" {
				if tag == skip {
					skip = ""
				}
				continue
			}
			if tag == "title" {
				inTitle = false
				continue
			}
			if block[tag] && d.newline() != nil {
				return title.String(), nil
			}
		case html.TextToken:
			if skip != "" {
				continue
			}
			text := string(z.Text())
			if inTitle {
				title.WriteString(text)
				continue
			}
			if strings.TrimSpace(text) == "" {
				if d.space() != nil {
					return title.String(), nil
				}
				continue
			}
			if startsSpace(text) && d.space() != nil {
				return title.String(), nil
			}
			if d.write(strings.Join(strings.Fields(text), " ")) != nil {
				return title.String(), nil
			}
			if endsSpace(text) && d.space() != nil {
				return title.String(), nil
			}
		}
	}
}

func startsSpace(s string) bool { return s != "" && strings.TrimLeft(s[:1], " \t\r\n\f") == "" }
func endsSpace(s string) bool   { return s != "" && strings.TrimRight(s[len(s)-1:], " \t\r\n\f") == "" }

// maxRun bounds the bytes between two '<' that an XML token may hold.
const maxRun = 256 << 10

// runSplitter inserts an empty element "<_/>" into any run of maxRun bytes without a '<'
// (at a character boundary), because encoding/xml returns a run of character data as one
// token, in memory: a part holding 100 MB of text in one element would cost 100 MB at once.
// Inside a huge tag the insertion makes the XML invalid, which ends that part's reading.
type runSplitter struct {
	r       io.Reader
	run     int
	pending []byte
}

var runBreak = []byte("<_/>")

func (s *runSplitter) Read(p []byte) (int, error) {
	if len(s.pending) > 0 {
		n := copy(p, s.pending)
		s.pending = s.pending[n:]
		return n, nil
	}
	n, err := s.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] == '<' {
			s.run = 0
			continue
		}
		if s.run++; s.run >= maxRun && utf8.RuneStart(p[i]) {
			s.run = 0
			s.pending = append(append(s.pending[:0], runBreak...), p[i:n]...)
			return i, err
		}
	}
	return n, err
}
