package text

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"golang.org/x/text/encoding/charmap"
)

// RTF: our own tokenizer (no library reads RTF text in pure Go well). It keeps the body text,
// decodes \'hh (Windows-1252 unless \ansicpg names another single-byte code page we know) and
// \uN (with its \ucN fallback skipped), ends lines at \par and \line, skips destinations that
// hold no body text (font and colour tables, pictures, \* groups), and reads title, author and
// dates from \info. Group nesting is bounded by MaxDepth.
func init() { register(&format{name: "rtf", read: readRTF}) }

// rtfSkip are destinations whose content is not body text.
var rtfSkip = map[string]bool{"fonttbl": true, "colortbl": true, "stylesheet": true, "listtable": true,
	"listoverridetable": true, "pict": true, "object": true, "themedata": true, "colorschememapping": true,
	"datastore": true, "latentstyles": true, "rsidtbl": true, "generator": true, "xmlnstbl": true,
	"header": true, "footer": true, "headerl": true, "headerr": true, "footerl": true, "footerr": true,
	"fldinst": true, "bkmkstart": true, "bkmkend": true, "filetbl": true, "revtbl": true, "pgdsctbl": true}

// rtfInfo are \info fields kept (as the destination's text).
var rtfInfo = map[string]bool{"title": true, "author": true, "creatim": true, "revtim": true, "subject": true}

type rtfGroup struct {
	skip bool
	dest string // the \info field this group fills
	uc   int    // characters to skip after \uN
}

func readRTF(ctx context.Context, src *source, d *Doc) error {
	br := bufio.NewReaderSize(prefix(src, d), 64<<10)
	head, _ := br.Peek(5)
	if string(head) != `{\rtf` {
		return fmt.Errorf("not an RTF file")
	}
	cp := charmap.Windows1252
	stack := []rtfGroup{{uc: 1}}
	info := map[string]*strings.Builder{}
	dates := map[string]map[string]int{}
	skipChars := 0
	var text strings.Builder
	emit := func(s string) error {
		g := stack[len(stack)-1]
		switch {
		case g.skip:
			return nil
		case g.dest != "":
			if b := info[g.dest]; b != nil && b.Len() < 4096 {
				b.WriteString(s)
			}
			return nil
		}
		text.WriteString(s)
		if text.Len() >= 32<<10 {
			err := d.write(text.String())
			text.Reset()
			return err
		}
		return nil
	}
	flush := func() error { err := d.write(text.String()); text.Reset(); return err }
	var high rune // a pending UTF-16 high surrogate from \uN
	for n := 0; ; n++ {
		if n%65536 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		c, err := br.ReadByte()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch c {
		case '{':
			top := stack[len(stack)-1]
			if len(stack) > src.lim.MaxDepth {
				return errTooDeep{"RTF groups", src.lim.MaxDepth}
			}
			stack = append(stack, rtfGroup{skip: top.skip, dest: top.dest, uc: top.uc})
			skipChars = 0
		case '}':
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			skipChars = 0
		case '\\':
			word, param, hasParam, sym, err := rtfControl(br)
			if err != nil {
				break
			}
			g := &stack[len(stack)-1]
			if sym != 0 {
				switch sym {
				case '\'':
					h1, _ := br.ReadByte()
					h2, _ := br.ReadByte()
					v, perr := strconv.ParseUint(string([]byte{h1, h2}), 16, 8)
					if perr != nil {
						continue
					}
					if skipChars > 0 {
						skipChars--
						continue
					}
					if err := emit(string(cp.DecodeByte(byte(v)))); err != nil {
						return ignoreFull(err)
					}
				case '*':
					g.skip = true
				case '~':
					err = emit("\u00a0")
				case '-', '_':
				case '\\', '{', '}':
					if skipChars > 0 {
						skipChars--
						continue
					}
					err = emit(string(sym))
				case '\n', '\r':
					err = emit("\n")
				}
				if err != nil {
					return ignoreFull(err)
				}
				continue
			}
			switch {
			case rtfSkip[word]:
				g.skip = true
			case rtfInfo[word]:
				g.dest = word
				info[word] = &strings.Builder{}
			case word == "yr" || word == "mo" || word == "dy" || word == "hr" || word == "min":
				if g.dest == "creatim" || g.dest == "revtim" {
					if dates[g.dest] == nil {
						dates[g.dest] = map[string]int{}
					}
					dates[g.dest][word] = param
				}
			case word == "ansicpg" && hasParam:
				if m := codePage(param); m != nil {
					cp = m
				}
			case word == "uc" && hasParam:
				g.uc = param
			case word == "u" && hasParam:
				r := rune(int16(param)) // RTF writes values over 32767 as negative
				if r < 0 {
					r += 65536
				}
				s := ""
				switch {
				case utf16.IsSurrogate(r) && r < 0xDC00:
					high = r
				case utf16.IsSurrogate(r) && high != 0:
					s = string(utf16.DecodeRune(high, r))
					high = 0
				default:
					s = string(r)
				}
				if err := emit(s); err != nil {
					return ignoreFull(err)
				}
				skipChars = g.uc
			case word == "par" || word == "line" || word == "sect" || word == "page" || word == "row":
				if err := emit("\n"); err != nil {
					return ignoreFull(err)
				}
			case word == "tab" || word == "cell":
				if err := emit("\t"); err != nil {
					return ignoreFull(err)
				}
			case word == "emdash":
				err = emit("—")
			case word == "endash":
				err = emit("–")
			case word == "lquote":
				err = emit("‘")
			case word == "rquote":
				err = emit("’")
			case word == "ldblquote":
				err = emit("“")
			case word == "rdblquote":
				err = emit("”")
			case word == "bullet":
				err = emit("•")
			}
			if err != nil {
				return ignoreFull(err)
			}
		case '\r', '\n':
		default:
			if skipChars > 0 {
				skipChars--
				continue
			}
			if err := emit(string(cp.DecodeByte(c))); err != nil {
				return ignoreFull(err)
			}
		}
	}
	if b := info["title"]; b != nil {
		d.Title = b.String()
	}
	if b := info["author"]; b != nil {
		d.Author = b.String()
	}
	rtfTime := func(k string) time.Time {
		v := dates[k]
		if v == nil || v["yr"] == 0 {
			return time.Time{}
		}
		return parseDate(fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:00", v["yr"], max(v["mo"], 1), max(v["dy"], 1), v["hr"], v["min"]))
	}
	d.Created, d.Modified = rtfTime("creatim"), rtfTime("revtim")
	return ignoreFull(flush())
}

// rtfControl reads a control word after '\': its letters, an optional signed parameter (and the
// one space that ends it), or a control symbol.
func rtfControl(br *bufio.Reader) (word string, param int, hasParam bool, sym byte, err error) {
	c, err := br.ReadByte()
	if err != nil {
		return "", 0, false, 0, err
	}
	if !isLetter(c) {
		return "", 0, false, c, nil
	}
	var w []byte
	for isLetter(c) && len(w) < 32 {
		w = append(w, c)
		if c, err = br.ReadByte(); err != nil {
			return string(w), 0, false, 0, nil
		}
	}
	neg := false
	if c == '-' {
		neg = true
		if c, err = br.ReadByte(); err != nil {
			return string(w), 0, false, 0, nil
		}
	}
	digits := 0
	for c >= '0' && c <= '9' && digits < 10 {
		param = param*10 + int(c-'0')
		digits++
		hasParam = true
		if c, err = br.ReadByte(); err != nil {
			break
		}
	}
	if neg {
		param = -param
	}
	if err == nil && c != ' ' {
		_ = br.UnreadByte()
	}
	return string(w), param, hasParam, 0, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// codePage maps \ansicpgN to a single-byte charmap we decode.
func codePage(n int) *charmap.Charmap {
	switch n {
	case 1250:
		return charmap.Windows1250
	case 1251:
		return charmap.Windows1251
	case 1252:
		return charmap.Windows1252
	case 1253:
		return charmap.Windows1253
	case 1254:
		return charmap.Windows1254
	case 1257:
		return charmap.Windows1257
	case 437:
		return charmap.CodePage437
	case 850:
		return charmap.CodePage850
	case 10000:
		return charmap.Macintosh
	}
	return nil
}
