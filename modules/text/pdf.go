package text

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/ledongthuc/pdf"
)

// PDF: the text layer, one segment per page, read with github.com/ledongthuc/pdf (pure Go,
// streams content from the file). The text walk is ours: it starts a line at each text object
// and line move, and reads a large TJ gap as a space (producers that position words instead of
// writing space glyphs). Title, author, dates and language come from the Info dictionary and
// the catalog.
func init() { register(&format{name: "pdf", read: readPDF}) }

// tjSpace is the TJ displacement (thousandths of an em, negative moves right) read as a space.
const tjSpace = -180

func readPDF(ctx context.Context, src *source, d *Doc) error {
	r, err := pdf.NewReaderEncrypted(pdf2Header{src}, src.size, func() string { return "" })
	switch {
	case errors.Is(err, pdf.ErrInvalidPassword):
		return fmt.Errorf("encrypted PDF: it needs a password to be read")
	case err != nil && strings.Contains(strings.ToLower(err.Error()), "encrypt"):
		return fmt.Errorf("encrypted PDF: %w", err)
	case err != nil:
		return err
	}
	info := r.Trailer().Key("Info")
	d.Title = info.Key("Title").Text()
	d.Author = info.Key("Author").Text()
	d.Created = parseDate(info.Key("CreationDate").Text())
	d.Modified = parseDate(info.Key("ModDate").Text())
	d.Language = r.Trailer().Key("Root").Key("Lang").Text()
	n := r.NumPage()
	d.Pages = n
	if n > src.lim.MaxPages {
		n = src.lim.MaxPages
		d.Truncated = fmt.Sprintf("read the first %d of %d pages", n, d.Pages)
	}
	var bad []int
	for i := 1; i <= n; i++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		d.segment(map[string]any{"page": i})
		if err := pdfPage(ctx, r.Page(i), d); errors.Is(err, errTextFull) {
			break
		} else if ctx.Err() != nil {
			return ctx.Err()
		} else if err != nil {
			bad = append(bad, i)
		}
	}
	if len(bad) > 0 {
		if len(bad) == n {
			return fmt.Errorf("no page could be read (page 1: damaged content)")
		}
		if d.Truncated == "" {
			d.Truncated = fmt.Sprintf("%d unreadable pages skipped, the first is page %d", len(bad), bad[0])
		}
	}
	return nil
}

// pdfPage writes one page's text into d. A panic in the content parser (a damaged stream)
// is an error for this page only.
func pdfPage(ctx context.Context, p pdf.Page, d *Doc) (err error) {
	defer func() {
		if x := recover(); x != nil {
			if e, ok := x.(error); ok && errors.Is(e, errTextFull) {
				err = errTextFull
				return
			}
			err = fmt.Errorf("damaged page: %v", x)
		}
	}()
	if p.V.IsNull() || p.V.Key("Contents").Kind() == pdf.Null {
		return nil
	}
	fonts := map[string]*pdf.Font{}
	font := func(name string) pdf.TextEncoding {
		f, ok := fonts[name]
		if !ok {
			v := p.Font(name)
			f = &v
			fonts[name] = f
		}
		if f.V.IsNull() {
			return nil
		}
		return f.Encoder()
	}
	var enc pdf.TextEncoding
	var args []pdf.Value
	lastY, haveY := 0.0, false
	show := func(raw string) {
		var s string
		if enc != nil {
			s = enc.Decode(raw)
		} else {
			s = raw
		}
		s = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || r == unicode.ReplacementChar {
				if r == '\t' {
					return ' '
				}
				return -1
			}
			return r
		}, s)
		if s != "" && d.write(s) != nil {
			panic(errTextFull)
		}
	}
	line := func() {
		if d.newline() != nil {
			panic(errTextFull)
		}
	}
	ops := 0
	pdf.Interpret(p.V.Key("Contents"), func(stk *pdf.Stack, op string) {
		if ops++; ops%4096 == 0 && ctx.Err() != nil {
			panic(ctx.Err()) // a huge page stops at the job's deadline
		}
		args = args[:0]
		for n := stk.Len(); n > 0; n-- {
			args = append(args, pdf.Value{})
		}
		for i := len(args) - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "BT":
			line()
		case "T*":
			line()
		case "Td", "TD":
			if len(args) == 2 && args[1].Float64() != 0 {
				line()
			}
		case "Tm":
			if len(args) == 6 {
				y := args[5].Float64()
				if haveY && y != lastY {
					line()
				}
				lastY, haveY = y, true
			}
		case "Tf":
			if len(args) == 2 {
				enc = font(args[0].Name())
			}
		case "'", "\"":
			line()
			if len(args) > 0 {
				show(args[len(args)-1].RawString())
			}
		case "Tj":
			if len(args) == 1 {
				show(args[0].RawString())
			}
		case "TJ":
			if len(args) != 1 {
				return
			}
			a := args[0]
			for i := 0; i < a.Len(); i++ {
				x := a.Index(i)
				switch x.Kind() {
				case pdf.String:
					show(x.RawString())
				case pdf.Integer, pdf.Real:
					if x.Float64() < tjSpace && d.space() != nil {
						panic(errTextFull)
					}
				}
			}
		}
	})
	return nil
}

// pdf2Header shows a "%PDF-2.0" header as "%PDF-1.7": the library accepts only 1.x headers,
// and what it reads of a 2.0 file (objects, streams, fonts) is the same.
type pdf2Header struct{ r io.ReaderAt }

func (h pdf2Header) ReadAt(p []byte, off int64) (int, error) {
	n, err := h.r.ReadAt(p, off)
	if off < 8 {
		for i := 0; i < n && off+int64(i) < 8; i++ {
			if j := off + int64(i); j >= 5 && j <= 7 {
				var head [8]byte
				if _, e := h.r.ReadAt(head[:], 0); e == nil && string(head[:]) == "%PDF-2.0" {
					p[i] = "1.7"[j-5]
				}
			}
		}
	}
	return n, err
}
