package text

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/homeindex/homeindex/sdk"
)

// Name is the module's name: its fields go under it.
const Name = "text"

// Limits bound what one file may cost. Zero values take DefaultLimits' values.
type Limits struct {
	// MaxTextBytes is the text kept per file; the rest is dropped and text.truncated says so.
	MaxTextBytes int
	// MaxPlainBytes is how much of a plain-text file is read (a 2 GB log is read this far).
	MaxPlainBytes int64
	// MaxFileBytes is the largest structured file (PDF, Office, EPUB, RTF, HTML...) Check accepts.
	MaxFileBytes int64
	// MaxZipEntries and MaxZipBytes bound a zip container (DOCX, XLSX, PPTX, ODF, EPUB): its
	// number of entries, and the bytes decompressed from it in total.
	MaxZipEntries int
	MaxZipBytes   int64
	// MaxDepth bounds the nesting of XML elements, JSON values and RTF groups.
	MaxDepth int
	// MaxPages bounds the PDF pages, slides, sheets and chapters read.
	MaxPages int
}

// DefaultLimits keep one file's peak memory well under 256 MB.
var DefaultLimits = Limits{
	MaxTextBytes:  8 << 20,
	MaxPlainBytes: 32 << 20,
	MaxFileBytes:  1 << 30,
	MaxZipEntries: 10_000,
	MaxZipBytes:   128 << 20,
	MaxDepth:      512,
	MaxPages:      5_000,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxTextBytes > 0 {
		d.MaxTextBytes = l.MaxTextBytes
	}
	if l.MaxPlainBytes > 0 {
		d.MaxPlainBytes = l.MaxPlainBytes
	}
	if l.MaxFileBytes > 0 {
		d.MaxFileBytes = l.MaxFileBytes
	}
	if l.MaxZipEntries > 0 {
		d.MaxZipEntries = l.MaxZipEntries
	}
	if l.MaxZipBytes > 0 {
		d.MaxZipBytes = l.MaxZipBytes
	}
	if l.MaxDepth > 0 {
		d.MaxDepth = l.MaxDepth
	}
	if l.MaxPages > 0 {
		d.MaxPages = l.MaxPages
	}
	return d
}

// Module is the text module's sdk.Handler.
type Module struct {
	Limits Limits
}

// New returns the module with DefaultLimits.
func New() *Module { return &Module{Limits: DefaultLimits} }

// Check accepts a file whose type or extension names a format the module reads, within the size
// limits. It does not open the file.
func (m *Module) Check(_ context.Context, job *sdk.Job) (bool, error) {
	f := detect(job.Document.Type, job.Path)
	if f == nil || job.Document.Size == 0 {
		return false, nil
	}
	lim := m.Limits.withDefaults()
	if !f.plain && job.Document.Size > lim.MaxFileBytes {
		job.Log.Info().Int64("size", job.Document.Size).Str("format", f.name).Msg("too large for the text module: declined")
		return false, nil
	}
	return true, nil
}

// Run extracts the file's text and fields.
func (m *Module) Run(ctx context.Context, job *sdk.Job) (sdk.Result, error) {
	f := detect(job.Document.Type, job.Path)
	if f == nil {
		return sdk.Result{}, sdk.Permanent(fmt.Errorf("text: no reader for type %q", job.Document.Type))
	}
	start := time.Now()
	d, err := Extract(ctx, job.Path, f.name, m.Limits)
	if err != nil {
		return sdk.Result{}, err
	}
	if d.Skipped != "" {
		job.Log.Info().Str("reason", d.Skipped).Msg("no text: skipped")
		return sdk.Result{}, nil
	}
	job.Log.Info().Str("format", f.name).Int("segments", len(d.Segments)).Int("words", d.Words).
		Dur("took", time.Since(start)).Msg("extracted")
	return d.Result(), nil
}

// Extract reads the file at path as format (a name detect returns) under lim. Errors are
// sdk.Permanent unless a retry could help (a file on a drive that went away, ctx ending).
func Extract(ctx context.Context, path, format string, lim Limits) (d *Doc, err error) {
	lim = lim.withDefaults()
	f := formatNamed(format)
	if f == nil {
		return nil, sdk.Permanent(fmt.Errorf("text: unknown format %q", format))
	}
	file, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("text: %w", err)
	}
	d = newDoc(format, lim)
	defer func() {
		if p := recover(); p != nil {
			d = nil
			err = sdk.Permanent(fmt.Errorf("text: %s parser failed on this file: %v", format, p))
		}
	}()
	err = f.read(ctx, &source{File: file, size: st.Size(), lim: lim}, d)
	var bomb errBomb
	var deep errTooDeep
	if (errors.As(err, &bomb) || errors.As(err, &deep)) && d.hasText() {
		d.Truncated = err.Error() // what came before the limit is a result
		err = nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var pe *sdk.PermanentError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, sdk.Permanent(fmt.Errorf("text: %s: %w", format, err))
	}
	d.finish()
	return d, nil
}

// openRegular opens path for reading. A file that is gone or not a regular file is a
// permanent failure; a drive that went away (EIO, ENODEV, ENXIO, ESTALE) is retried.
func openRegular(path string) (*os.File, error) {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, sdk.Permanent(fmt.Errorf("text: the file vanished before it could be read: %w", err))
	case errors.Is(err, syscall.EIO), errors.Is(err, syscall.ENODEV), errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.ESTALE):
		return nil, fmt.Errorf("text: %w", err)
	case err != nil:
		return nil, sdk.Permanent(fmt.Errorf("text: %w", err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("text: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, sdk.Permanent(fmt.Errorf("text: %s is not a regular file (%s)", path, st.Mode().Type()))
	}
	return f, nil
}

// source is the opened file handed to a format's reader.
type source struct {
	*os.File
	size int64
	lim  Limits
}

// errTextFull stops a reader once the Doc holds MaxTextBytes of text.
var errTextFull = errors.New("text limit reached")

// Doc is what a file yielded.
type Doc struct {
	Format   string
	Segments sdk.Segments
	Title    string
	Author   string
	Language string
	Pages    int
	Words    int
	Created  time.Time
	Modified time.Time
	Encoding string
	// Truncated says which limit cut the text short; "" when nothing was dropped.
	Truncated string
	// Skipped says why the file yields nothing (binary content); "" otherwise.
	Skipped string

	lim  Limits
	used int
	full bool // MaxTextBytes reached
	cur  strings.Builder
	loc  map[string]any
}

func newDoc(format string, lim Limits) *Doc { return &Doc{Format: format, lim: lim} }

// writeBytes is write for a byte slice, without converting it first.
func (d *Doc) writeBytes(b []byte) error {
	if d.full {
		return errTextFull
	}
	if left := d.lim.MaxTextBytes - d.used; len(b) > left {
		for left > 0 && !utf8.RuneStart(b[left]) {
			left--
		}
		d.cur.Write(b[:left])
		d.used += left
		d.full = true
		d.Truncated = fmt.Sprintf("text cut at %d bytes", d.lim.MaxTextBytes)
		return errTextFull
	}
	d.cur.Write(b)
	d.used += len(b)
	return nil
}

// write appends s to the current segment, up to MaxTextBytes in all. It returns errTextFull
// once the limit is reached (the text kept ends on a whole character).
func (d *Doc) write(s string) error {
	if d.full {
		return errTextFull
	}
	if left := d.lim.MaxTextBytes - d.used; len(s) > left {
		for left > 0 && !utf8.RuneStart(s[left]) {
			left--
		}
		d.cur.WriteString(s[:left])
		d.used += left
		d.full = true
		d.Truncated = fmt.Sprintf("text cut at %d bytes", d.lim.MaxTextBytes)
		return errTextFull
	}
	d.cur.WriteString(s)
	d.used += len(s)
	return nil
}

// newline ends a line unless the segment is empty or already ends one.
func (d *Doc) newline() error {
	if d.cur.Len() == 0 {
		return nil
	}
	if s := d.cur.String(); s[len(s)-1] == '\n' {
		return nil
	}
	return d.write("\n")
}

// space separates words unless the segment is empty or already ends in a space.
func (d *Doc) space() error {
	if d.cur.Len() == 0 {
		return nil
	}
	if s := d.cur.String(); s[len(s)-1] == ' ' || s[len(s)-1] == '\n' {
		return nil
	}
	return d.write(" ")
}

// segment ends the current segment and starts one at loc (nil: no position).
func (d *Doc) segment(loc map[string]any) {
	d.flush()
	d.loc = loc
}

func (d *Doc) flush() {
	text := strings.TrimSpace(d.cur.String())
	d.cur.Reset()
	if text == "" {
		return
	}
	d.Segments = append(d.Segments, sdk.Segment{Text: text, Fields: d.loc})
}

func (d *Doc) hasText() bool {
	return len(d.Segments) > 0 || strings.TrimSpace(d.cur.String()) != ""
}

// finish closes the last segment and counts words.
func (d *Doc) finish() {
	d.flush()
	d.Words = 0
	for _, s := range d.Segments {
		d.Words += countWords(s.Text)
	}
	d.Title = clean(d.Title)
	d.Author = clean(d.Author)
	if d.Language == "" {
		d.Language = guessLanguage(d.Segments)
	} else {
		d.Language = normLanguage(d.Language)
	}
}

// Result is the Doc as the module's result.
func (d *Doc) Result() sdk.Result {
	f := map[string]any{"format": d.Format, "words": d.Words}
	set := func(k, v string) {
		if v != "" {
			f[k] = v
		}
	}
	set("title", d.Title)
	set("author", d.Author)
	set("language", d.Language)
	set("encoding", d.Encoding)
	set("truncated", d.Truncated)
	if d.Pages > 0 {
		f["pages"] = d.Pages
	}
	for k, t := range map[string]time.Time{"created": d.Created, "modified": d.Modified} {
		if !t.IsZero() {
			f[k] = t.Format(time.RFC3339)
			f[k+"_unix"] = t.Unix()
		}
	}
	r := sdk.Result{Document: map[string]any{Name: f}}
	if len(d.Segments) > 0 {
		r.Content = d.Segments
	}
	return r
}

// countWords counts runs of letters or digits.
func countWords(s string) int {
	n, in := 0, false
	for _, r := range s {
		w := unicode.IsLetter(r) || unicode.IsDigit(r)
		if w && !in {
			n++
		}
		in = w
	}
	return n
}

// clean collapses white space and drops control characters in a metadata value.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 1000 {
		s = s[:1000]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}
