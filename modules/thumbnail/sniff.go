package thumbnail

import (
	"bytes"
	"strings"

	"github.com/gabriel-vasile/mimetype"
)

// Kind is what a file is, as far as this module cares.
type Kind string

// Kinds of files the module knows.
const (
	KindNone  Kind = ""      // nothing to draw
	KindJPEG  Kind = "jpeg"  // image/jpeg
	KindPNG   Kind = "png"   // image/png
	KindGIF   Kind = "gif"   // image/gif, first frame
	KindWebP  Kind = "webp"  // image/webp
	KindTIFF  Kind = "tiff"  // image/tiff
	KindBMP   Kind = "bmp"   // image/bmp
	KindHEIF  Kind = "heif"  // HEIC, HEIF and AVIF: recognised, declined
	KindPDF   Kind = "pdf"   // first page through pdftoppm
	KindVideo Kind = "video" // a frame through ffmpeg
)

// IsImage reports whether k is decoded in Go.
func (k Kind) IsImage() bool {
	switch k {
	case KindJPEG, KindPNG, KindGIF, KindWebP, KindTIFF, KindBMP:
		return true
	}
	return false
}

// SniffLen is how many leading bytes Sniff needs.
const SniffLen = 3072

// Sniff tells a file's kind from its first bytes (magic numbers, never the name).
func Sniff(head []byte) Kind {
	switch {
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return KindJPEG
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return KindPNG
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return KindGIF
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return KindWebP
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")):
		return KindTIFF
	case bytes.HasPrefix(head, []byte("BM")) && len(head) >= 26:
		return KindBMP
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return KindPDF
	}
	m := mimetype.Detect(head)
	switch {
	case m.Is("image/heic"), m.Is("image/heif"), m.Is("image/avif"), m.Is("image/heic-sequence"), m.Is("image/heif-sequence"):
		return KindHEIF
	case strings.HasPrefix(m.String(), "video/"):
		return KindVideo
	}
	return KindNone
}
