package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // DecodeConfig: header sizes only
	"image/jpeg"
	"image/png"
	"io"
	"time"

	"github.com/evanoberholster/imagemeta"
	"github.com/evanoberholster/imagemeta/exif2"
	"github.com/evanoberholster/imagemeta/meta"
)

// isobmffScan bounds how far into a HEIC/AVIF file the module looks for its Exif item and
// image sizes: encoders put both before the image data.
const isobmffScan = 4 << 20

// photoFormat names a photo container from its first bytes.
func photoFormat(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return "jpeg"
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "webp"
	case bytes.HasPrefix(head, []byte("GIF8")):
		return "gif"
	case len(head) >= 12 && string(head[4:8]) == "ftyp":
		switch brand := string(head[8:12]); brand {
		case "avif", "avis":
			return "avif"
		case "crx ":
			return "cr3"
		default:
			return "heif"
		}
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")),
		bytes.HasPrefix(head, []byte("IIRO")), bytes.HasPrefix(head, []byte("IIU\x00")):
		return "tiff" // TIFF and the TIFF-based raw formats (DNG, CR2, NEF, ARW, ORF, RW2, PEF)
	}
	return ""
}

// readPhoto reads a photo's EXIF and its size from the header.
func readPhoto(r *limitedFile) (*Info, error) {
	head := make([]byte, 32)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file")
		}
		return nil, err
	}
	head = head[:n]
	info := &Info{Kind: KindPhoto, Format: photoFormat(head)}
	if info.Format == "" {
		return nil, fmt.Errorf("not a photo format this module reads (starts % x)", head[:min(len(head), 8)])
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if err := photoSize(r, info); err != nil {
		return nil, err
	}
	ex, found, err := photoExif(r, info.Format)
	if err != nil && !found {
		// A photo without EXIF, or with EXIF the library gave up on, still has its size.
		if info.Width == 0 {
			return nil, err
		}
		return info, nil
	}
	if found {
		applyExif(info, ex)
	}
	return info, nil
}

// photoSize sets Width and Height from the container's header; it never decodes pixels, so a
// header claiming 100,000 × 100,000 costs nothing.
func photoSize(r *limitedFile, info *Info) error {
	sec := io.NewSectionReader(r, 0, 1<<62)
	switch info.Format {
	case "jpeg":
		c, err := jpeg.DecodeConfig(sec)
		if err != nil {
			return fmt.Errorf("jpeg header: %w", err)
		}
		info.Width, info.Height = c.Width, c.Height
	case "png":
		c, err := png.DecodeConfig(sec)
		if err != nil {
			return fmt.Errorf("png header: %w", err)
		}
		info.Width, info.Height = c.Width, c.Height
	case "gif":
		c, _, err := image.DecodeConfig(sec)
		if err != nil {
			return fmt.Errorf("gif header: %w", err)
		}
		info.Width, info.Height = c.Width, c.Height
	case "webp":
		w, h, err := webpSize(sec)
		if err != nil {
			return fmt.Errorf("webp header: %w", err)
		}
		info.Width, info.Height = w, h
	case "heif", "avif":
		buf, err := readPrefix(r, isobmffScan)
		if err != nil {
			return err
		}
		info.Width, info.Height = ispeSize(buf)
	}
	return nil
}

// readPrefix reads up to n bytes from the start of r.
func readPrefix(r *limitedFile, n int64) ([]byte, error) {
	size, err := r.size()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, min(size, n))
	if _, err := r.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf, nil
}

// webpSize reads a WebP's canvas size from its VP8X, VP8 or VP8L chunk.
func webpSize(r io.Reader) (int, int, error) {
	var b [30]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, 0, err
	}
	c := b[12:]
	switch string(c[:4]) {
	case "VP8X":
		w := 1 + (int(c[12]) | int(c[13])<<8 | int(c[14])<<16)
		h := 1 + (int(c[15]) | int(c[16])<<8 | int(c[17])<<16)
		return w, h, nil
	case "VP8L":
		if c[8] != 0x2f {
			return 0, 0, errors.New("bad VP8L signature")
		}
		v := binary.LittleEndian.Uint32(c[9:13])
		return 1 + int(v&0x3fff), 1 + int(v>>14&0x3fff), nil
	case "VP8 ":
		if c[11] != 0x9d || c[12] != 0x01 || c[13] != 0x2a {
			return 0, 0, errors.New("bad VP8 start code")
		}
		return int(binary.LittleEndian.Uint16(c[14:16]) & 0x3fff), int(binary.LittleEndian.Uint16(c[16:18]) & 0x3fff), nil
	}
	return 0, 0, fmt.Errorf("unknown first chunk %q", c[:4])
}

// ispeSize returns the size of a HEIF/AVIF file's primary item: the image spatial extent
// ('ispe') property that the item property association ('ipma') gives the primary item
// ('pitm'). buf is the file's start.
func ispeSize(buf []byte) (w, h int) {
	meta := isoChild(buf, "meta")
	if len(meta) < 4 {
		return 0, 0
	}
	meta = meta[4:] // version and flags
	pitm := isoChild(meta, "pitm")
	iprp := isoChild(meta, "iprp")
	ipco, ipma := isoChild(iprp, "ipco"), isoChild(iprp, "ipma")
	if len(pitm) < 6 || ipco == nil || len(ipma) < 8 {
		return 0, 0
	}
	primary := uint32(binary.BigEndian.Uint16(pitm[4:]))
	if pitm[0] != 0 && len(pitm) >= 8 {
		primary = binary.BigEndian.Uint32(pitm[4:])
	}
	var props [][]byte // ipco's properties, in order (ipma counts from 1)
	for b := ipco; len(b) >= 8; {
		n := int(binary.BigEndian.Uint32(b))
		if n < 8 || n > len(b) {
			break
		}
		props = append(props, b[:n])
		b = b[n:]
	}
	version, flags := ipma[0], ipma[3]
	count := binary.BigEndian.Uint32(ipma[4:])
	b := ipma[8:]
	for range min(count, 1<<16) {
		var item uint32
		if version < 1 {
			if len(b) < 3 {
				return 0, 0
			}
			item, b = uint32(binary.BigEndian.Uint16(b)), b[2:]
		} else {
			if len(b) < 5 {
				return 0, 0
			}
			item, b = binary.BigEndian.Uint32(b), b[4:]
		}
		assoc := int(b[0])
		b = b[1:]
		for range assoc {
			var idx int
			if flags&1 != 0 {
				if len(b) < 2 {
					return 0, 0
				}
				idx, b = int(binary.BigEndian.Uint16(b)&0x7fff), b[2:]
			} else {
				if len(b) < 1 {
					return 0, 0
				}
				idx, b = int(b[0]&0x7f), b[1:]
			}
			if item == primary && idx >= 1 && idx <= len(props) {
				p := props[idx-1]
				if string(p[4:8]) == "ispe" && len(p) >= 20 {
					return int(binary.BigEndian.Uint32(p[12:])), int(binary.BigEndian.Uint32(p[16:]))
				}
			}
		}
	}
	return 0, 0
}

// isoChild returns the payload of the first box of type typ among the boxes in b, nil when
// there is none.
func isoChild(b []byte, typ string) []byte {
	for len(b) >= 8 {
		n := int(binary.BigEndian.Uint32(b))
		hl := 8
		if n == 1 && len(b) >= 16 {
			n64 := binary.BigEndian.Uint64(b[8:])
			if n64 > uint64(len(b)) {
				n = len(b) + 1
			} else {
				n, hl = int(n64), 16
			}
		}
		if n == 0 {
			n = len(b)
		}
		if n < hl {
			return nil
		}
		if string(b[4:8]) == typ {
			return b[hl:min(n, len(b))]
		}
		if n > len(b) {
			return nil
		}
		b = b[n:]
	}
	return nil
}

// photoExif decodes the EXIF block of a photo. found is false when the file has none.
func photoExif(r *limitedFile, format string) (ex exif2.Exif, found bool, err error) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return ex, false, err
	}
	switch format {
	case "jpeg", "tiff", "cr3":
		ex, err = imagemeta.Decode(r)
		if errors.Is(err, imagemeta.ErrMetadataNotSupported) && format == "tiff" {
			// A TIFF-based raw format the library does not name (NEF, ARW, ORF, ...): its
			// directories are plain TIFF.
			if _, err := r.Seek(0, io.SeekStart); err != nil {
				return ex, false, err
			}
			ex, err = exif2.Parse(r)
		}
		if errors.Is(err, meta.ErrNoExif) || errors.Is(err, imagemeta.ErrNoExif) {
			return ex, false, err
		}
		// The library returns what it read up to an error in a later directory: keep it.
		return ex, err == nil || ex.Make != "" || ex.Model != "" || !ex.DateTimeOriginal().IsZero(), err
	case "png":
		b, err := pngExif(r)
		if err != nil || b == nil {
			return ex, false, err
		}
		return parseTIFFExif(b)
	case "webp":
		b, err := webpExif(r)
		if err != nil || b == nil {
			return ex, false, err
		}
		return parseTIFFExif(b)
	case "heif", "avif":
		buf, err := readPrefix(r, isobmffScan)
		if err != nil {
			return ex, false, err
		}
		b := isobmffExif(buf)
		if b == nil {
			return ex, false, nil
		}
		return parseTIFFExif(b)
	}
	return ex, false, nil
}

// parseTIFFExif decodes a bare EXIF block (a TIFF header and its directories).
func parseTIFFExif(b []byte) (exif2.Exif, bool, error) {
	b = bytes.TrimPrefix(b, []byte("Exif\x00\x00"))
	ex, err := exif2.Parse(bytes.NewReader(b))
	return ex, err == nil || ex.Make != "" || ex.Model != "", err
}

// pngExif returns the payload of a PNG's eXIf chunk, nil when there is none.
func pngExif(r *limitedFile) ([]byte, error) {
	size, err := r.size()
	if err != nil {
		return nil, err
	}
	var hdr [8]byte
	for off := int64(8); off+8 <= size; {
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return nil, err
		}
		n := int64(binary.BigEndian.Uint32(hdr[:4]))
		switch string(hdr[4:]) {
		case "eXIf":
			if n > 1<<20 || off+8+n > size {
				return nil, errors.New("png eXIf chunk larger than the file or 1 MiB")
			}
			b := make([]byte, n)
			_, err := r.ReadAt(b, off+8)
			return b, err
		case "IDAT", "IEND":
			return nil, nil // eXIf comes before the image data
		}
		off += 12 + n
	}
	return nil, nil
}

// webpExif returns the payload of a WebP's EXIF chunk, nil when there is none.
func webpExif(r *limitedFile) ([]byte, error) {
	size, err := r.size()
	if err != nil {
		return nil, err
	}
	var hdr [8]byte
	for off := int64(12); off+8 <= size; {
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return nil, err
		}
		n := int64(binary.LittleEndian.Uint32(hdr[4:]))
		if string(hdr[:4]) == "EXIF" {
			if n > 1<<20 || off+8+n > size {
				return nil, errors.New("webp EXIF chunk larger than the file or 1 MiB")
			}
			b := make([]byte, n)
			_, err := r.ReadAt(b, off+8)
			return b, err
		}
		off += 8 + n + n&1
	}
	return nil, nil
}

// isobmffExif finds the Exif item of a HEIF/AVIF file in buf (the file's start): the item is
// a 4-byte offset followed by "Exif\0\0" and a TIFF header.
func isobmffExif(buf []byte) []byte {
	for _, tiff := range [][]byte{[]byte("Exif\x00\x00MM\x00*"), []byte("Exif\x00\x00II*\x00")} {
		if i := bytes.Index(buf, tiff); i >= 0 {
			return buf[i:]
		}
	}
	for _, tiff := range [][]byte{[]byte("MM\x00*\x00\x00\x00\x08"), []byte("II*\x00\x08\x00\x00\x00")} {
		if i := bytes.Index(buf, tiff); i >= 0 {
			return buf[i:]
		}
	}
	return nil
}

// applyExif copies the EXIF fields the module reports into info.
func applyExif(info *Info, ex exif2.Exif) {
	info.CameraMake, info.CameraModel = ex.Make, ex.Model
	info.Lens = ex.LensModel
	if ex.Orientation >= 1 && ex.Orientation <= 8 {
		info.Orientation = int(ex.Orientation)
	}
	if info.Width == 0 && info.Height == 0 {
		info.Width, info.Height = int(ex.ImageWidth), int(ex.ImageHeight)
	}
	for _, t := range []time.Time{ex.DateTimeOriginal(), ex.CreateDate()} {
		if !t.IsZero() && t.Year() > 1 {
			info.Date = t
			// The library gives the time in the file's offset when it has one, in UTC
			// (the wall clock as written) when not.
			info.HasOffset = t.Location() != time.UTC
			break
		}
	}
	if lat, lng := ex.GPS.Latitude(), ex.GPS.Longitude(); validGeo(lat, lng) {
		info.HasGeo, info.Lat, info.Lng = true, lat, lng
		info.Altitude = float64(ex.GPS.Altitude())
	}
}
