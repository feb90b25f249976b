package scanner

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// detectCases are files with the type DetectType gives them.
var detectCases = func() []struct {
	name    string
	content []byte
	want    string
} {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	appleDouble := append([]byte{0x00, 0x05, 0x16, 0x07, 0x00, 0x02, 0x00, 0x00}, make([]byte, 74)...)
	binary := []byte{0x00, 0x01, 0x02, 0xfe, 0xff, 0x00, 0x13, 0x37}
	return []struct {
		name    string
		content []byte
		want    string
	}{
		{"notes.txt", []byte("hello world\n"), "text/plain"},               // no "; charset=utf-8"
		{"page.html", []byte("<html><body>hi</body></html>"), "text/html"}, // no parameters
		{"image.dat", png, "image/png"},                                    // content beats extension
		{"._photo.jpg", appleDouble, "multipart/appledouble"},              // before the extension
		{"doc.pdf", binary, "application/pdf"},                             // unknown content: extension
		{"blob.unknownext", binary, "application/octet-stream"},            // nothing known
		{"noext", binary, "application/octet-stream"},
		{"empty", nil, "text/plain"}, // mimetype's answer for no bytes (libmagic says inode/x-empty)
		// Larger than one read of the hasher: the head is its first read's start.
		{"big.txt", bytes.Repeat([]byte("hello world "), 60<<10), "text/plain"},
		{"big.png", append(png, make([]byte, 700<<10)...), "image/png"},
		{"head-then-binary.bin", append(bytes.Repeat([]byte("t"), detectLimit), binary...), "text/plain"}, // only the head is read
	}
}()

func TestDetectType(t *testing.T) {
	tests := detectCases
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name)
			if err := os.WriteFile(p, tt.content, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := DetectType(p)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("DetectType = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDetectTypeFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"page.html": "<html><body>hi</body></html>"})
	symlink(t, "page.html", filepath.Join(dir, "link"))
	if got, err := DetectType(filepath.Join(dir, "link")); err != nil || got != "text/html" {
		t.Errorf("DetectType(link) = %q, %v; want the target's text/html", got, err)
	}
}

func TestDetectTypeRejectsNonRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := DetectType(fifo); !errors.Is(err, ErrNotRegular) {
		t.Errorf("err = %v, want ErrNotRegular", err)
	}
}
