package scanner

import (
	"bytes"
	"io/fs"
	"mime"
	"path/filepath"
	"strings"

	"github.com/gabriel-vasile/mimetype"
	"golang.org/x/sys/unix"
)

// detectLimit is how many leading bytes DetectType reads: mimetype's default read limit, the
// most any of its matchers looks at.
const detectLimit = 4096

const octetStream = "application/octet-stream"

// appleDoubleMagic starts an AppleDouble resource-fork file ("._name" files macOS leaves on
// non-HFS drives); libmagic names it multipart/appledouble, mimetype does not know it.
var appleDoubleMagic = []byte{0x00, 0x05, 0x16, 0x07}

// DetectType returns the MIME type of the file at path, without parameters: mimetype's answer
// from the first bytes; if that is application/octet-stream, multipart/appledouble for files
// starting with 00 05 16 07, else the type of the extension (mime.TypeByExtension), else
// application/octet-stream. Symlinks are followed. It reads at most detectLimit bytes.
func DetectType(path string) (string, error) {
	fd, err := openRead(path)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if !isRegular(&st) {
		return "", &fs.PathError{Op: "detect", Path: path, Err: ErrNotRegular}
	}

	buf := make([]byte, detectLimit)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			break
		}
		n += m
	}
	return detectHead(path, buf[:n]), nil
}

// detectHead is DetectType's answer for a file at path starting with head (its first
// detectLimit bytes, or all of a shorter file).
func detectHead(path string, head []byte) string {
	if t := mimetype.Detect(head).String(); !isOctetStream(t) {
		return stripParams(t)
	}
	if bytes.HasPrefix(head, appleDoubleMagic) {
		return "multipart/appledouble"
	}
	if t := mime.TypeByExtension(filepath.Ext(path)); t != "" {
		return stripParams(t)
	}
	return octetStream
}

func isOctetStream(t string) bool { return stripParams(t) == octetStream }

// stripParams drops "; charset=..." and the like.
func stripParams(t string) string {
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(t)
}
