package text

import (
	"archive/zip"
	"context"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// container is a zip file (DOCX, PPTX, XLSX, ODF, EPUB) read under Limits: at most
// MaxZipEntries entries, and MaxZipBytes decompressed in total over every entry opened, so a
// zip bomb costs bounded time and memory.
type container struct {
	zr     *zip.Reader
	byName map[string]*zip.File
	left   int64 // decompressed bytes still allowed
	lim    Limits
}

// errBomb reports a container over the limits.
type errBomb struct{ msg string }

func (e errBomb) Error() string { return "zip bomb suspected: " + e.msg }

func openContainer(src *source) (*container, error) {
	if n, ok := zipEntryCount(src); ok && n > src.lim.MaxZipEntries {
		return nil, errBomb{fmt.Sprintf("%d entries, the limit is %d", n, src.lim.MaxZipEntries)}
	}
	zr, err := zip.NewReader(src, src.size)
	if err != nil {
		return nil, fmt.Errorf("damaged zip container: %w", err)
	}
	if len(zr.File) > src.lim.MaxZipEntries {
		return nil, errBomb{fmt.Sprintf("%d entries, the limit is %d", len(zr.File), src.lim.MaxZipEntries)}
	}
	c := &container{zr: zr, byName: make(map[string]*zip.File, len(zr.File)), left: src.lim.MaxZipBytes, lim: src.lim}
	for _, f := range zr.File {
		c.byName[strings.TrimPrefix(f.Name, "/")] = f
	}
	return c, nil
}

// zipEntryCount reads the entry count of the end-of-central-directory record, before
// archive/zip allocates one record per entry. ok is false when it cannot tell (zip64).
func zipEntryCount(src *source) (int, bool) {
	n := int64(64 << 10)
	if src.size < n {
		n = src.size
	}
	buf := make([]byte, n)
	if _, err := src.ReadAt(buf, src.size-n); err != nil && !errors.Is(err, io.EOF) {
		return 0, false
	}
	for i := len(buf) - 22; i >= 0; i-- {
		if binary.LittleEndian.Uint32(buf[i:]) == 0x06054b50 {
			c := int(binary.LittleEndian.Uint16(buf[i+10:]))
			return c, c != 0xFFFF
		}
	}
	return 0, false
}

// has reports whether the container holds name.
func (c *container) has(name string) bool { _, ok := c.byName[name]; return ok }

// open returns name's decompressed bytes as a stream that fails once the container's budget
// is spent. A missing entry is an error wrapping fs-like errMissing.
func (c *container) open(name string) (io.ReadCloser, error) {
	f, ok := c.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s", errMissing, name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &budgeted{rc: rc, c: c}, nil
}

var errMissing = errors.New("missing entry")

type budgeted struct {
	rc io.ReadCloser
	c  *container
}

func (b *budgeted) Read(p []byte) (int, error) {
	if b.c.left <= 0 {
		return 0, errBomb{fmt.Sprintf("more than %d bytes decompressed", b.c.lim.MaxZipBytes)}
	}
	if int64(len(p)) > b.c.left {
		p = p[:b.c.left]
	}
	n, err := b.rc.Read(p)
	b.c.left -= int64(n)
	return n, err
}

func (b *budgeted) Close() error { return b.rc.Close() }

// walk streams entry name's XML tokens to fn with their depth (1 for the root element). The
// tokens are raw (namespace prefixes kept in Name.Space); nesting past MaxDepth is an error.
func (c *container) walk(ctx context.Context, name string, fn func(tok xml.Token, depth int) error) error {
	rc, err := c.open(name)
	if err != nil {
		return err
	}
	defer rc.Close()
	dec := newXMLDecoder(rc)
	depth := 0
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var bomb errBomb
		if errors.As(err, &bomb) {
			return bomb
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, ok := tok.(xml.StartElement); ok {
			if depth++; depth > c.lim.MaxDepth {
				return errTooDeep{"XML in " + name, c.lim.MaxDepth}
			}
		}
		if err := fn(tok, depth); err != nil {
			return err
		}
		if _, ok := tok.(xml.EndElement); ok {
			depth--
		}
	}
}

// attr returns the value of the attribute with local name local.
func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// resolve joins a relative reference inside the container to the directory of base.
func resolve(base, ref string) string {
	if strings.HasPrefix(ref, "/") {
		return strings.TrimPrefix(path.Clean(ref), "/")
	}
	return strings.TrimPrefix(path.Join(path.Dir(base), ref), "/")
}

// stop reports whether err ends a walk because the text is full (then the result stands).
func textFull(err error) bool { return errors.Is(err, errTextFull) }

// ignoreFull turns errTextFull into nil: a full Doc is a result.
func ignoreFull(err error) error {
	if textFull(err) {
		return nil
	}
	return err
}
