package text

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Plain text, Markdown, source code, CSV and TSV: a bounded prefix of the file (MaxPlainBytes),
// decoded from the encoding its first bytes show.
func init() {
	register(&format{name: "plain", plain: true, read: readPlain})
	register(&format{name: "code", plain: true, read: readPlain})
	register(&format{name: "markdown", plain: true, read: readMarkdown})
	register(&format{name: "csv", plain: true, read: func(ctx context.Context, src *source, d *Doc) error { return readDelimited(ctx, src, d, ',') }})
	register(&format{name: "tsv", plain: true, read: func(ctx context.Context, src *source, d *Doc) error { return readDelimited(ctx, src, d, '\t') }})
}

// sniffBytes is how much of a file decides its encoding and whether it is binary.
const sniffBytes = 8 << 10

// decoded opens src as UTF-8 text: it sniffs the first bytes, sets d.Encoding, and returns a
// reader of at most MaxPlainBytes of the file, decoded. It sets d.Skipped and returns nil for
// binary content. A prefix cut short sets d.Truncated.
func decoded(src *source, d *Doc) (io.Reader, error) {
	head := make([]byte, sniffBytes)
	n, err := io.ReadFull(src, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	head = head[:n]
	enc, name := sniffEncoding(head)
	if enc == nil {
		d.Skipped = "binary content"
		return nil, nil
	}
	d.Encoding = name
	limit := src.lim.MaxPlainBytes
	if src.size > limit {
		d.Truncated = fmt.Sprintf("read the first %d of %d bytes", limit, src.size)
	}
	r := io.MultiReader(bytes.NewReader(head), io.LimitReader(src, limit-int64(len(head))))
	if enc == encoding.Nop {
		return r, nil
	}
	return transform.NewReader(r, enc.NewDecoder()), nil
}

// sniffEncoding names the encoding of text starting with head; nil for binary content.
// A byte-order mark decides; else valid UTF-8 (a character cut at the end of head allowed) is
// UTF-8; else text with NULs in every other byte is BOM-less UTF-16; else any other NUL or
// many control bytes means binary; else Windows-1252 (a superset of Latin-1's printable range).
func sniffEncoding(head []byte) (encoding.Encoding, string) {
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		return unicode.UTF8BOM, "utf-8"
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		return unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM), "utf-16le"
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), "utf-16be"
	}
	if le, be := utf16Shape(head); le {
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), "utf-16le"
	} else if be {
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), "utf-16be"
	}
	control := 0
	for _, c := range head {
		if c == 0 {
			return nil, ""
		}
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != 0x1b {
			control++
		}
	}
	if control*100 > len(head)*2 { // more than 2% control bytes
		return nil, ""
	}
	if validUTF8Prefix(head) {
		return encoding.Nop, "utf-8"
	}
	return charmap.Windows1252, "windows-1252"
}

// utf16Shape reports BOM-less UTF-16 text of mostly ASCII: NULs at nearly every odd (LE) or
// even (BE) offset and nowhere else.
func utf16Shape(head []byte) (le, be bool) {
	if len(head) < 16 {
		return false, false
	}
	var even, odd int
	for i, c := range head {
		if c == 0 {
			if i%2 == 0 {
				even++
			} else {
				odd++
			}
		}
	}
	half := len(head) / 2
	return odd*10 >= half*9 && even == 0, even*10 >= half*9 && odd == 0
}

// validUTF8Prefix is utf8.Valid allowing a character cut at the end.
func validUTF8Prefix(b []byte) bool {
	for i := 0; i < 3 && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return true
		}
		b = b[:len(b)-1]
	}
	return utf8.Valid(b)
}

// copyText writes r's text into d line by line, until EOF or the text limit.
func copyText(ctx context.Context, r io.Reader, d *Doc, line func(string) string) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		s, err := br.ReadString('\n')
		if s != "" {
			s = strings.Map(dropControl, strings.ToValidUTF8(s, "\uFFFD"))
			if line != nil {
				s = line(s)
			}
			if werr := d.write(s); werr != nil {
				return nil // errTextFull: what was kept is the result
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func readPlain(ctx context.Context, src *source, d *Doc) error {
	r, err := decoded(src, d)
	if r == nil {
		return err
	}
	return copyText(ctx, r, d, nil)
}

// readMarkdown keeps the text as written (markup characters are not words) and takes the
// first heading as the title: "# Title" or a line underlined with "===".
func readMarkdown(ctx context.Context, src *source, d *Doc) error {
	r, err := decoded(src, d)
	if r == nil {
		return err
	}
	prev := ""
	return copyText(ctx, r, d, func(s string) string {
		t := strings.TrimSpace(s)
		if d.Title == "" {
			switch {
			case strings.HasPrefix(t, "# "):
				d.Title = strings.TrimSpace(strings.Trim(t, "# "))
			case prev != "" && len(t) >= 3 && strings.Trim(t, "=") == "":
				d.Title = prev
			}
		}
		if t != "" {
			prev = t
		}
		return s
	})
}

// readDelimited writes one line per record, fields separated by a tab; quoted fields lose
// their quotes. A malformed record is kept as its raw line.
func readDelimited(ctx context.Context, src *source, d *Doc, comma rune) error {
	r, err := decoded(src, d)
	if r == nil {
		return err
	}
	cr := csv.NewReader(r)
	cr.Comma = comma
	cr.LazyQuotes = true
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			continue
		}
		if err != nil {
			return err
		}
		if d.write(strings.ToValidUTF8(strings.Join(rec, "\t"), "\uFFFD")+"\n") != nil {
			return nil
		}
	}
}

// dropControl removes control characters other than line breaks and tabs (NULs in a damaged
// or sparse file, terminal escapes in a log).
func dropControl(r rune) rune {
	if r < 0x20 && r != '\n' && r != '\t' && r != '\r' && r != '\f' || r == 0x7f {
		return -1
	}
	return r
}
