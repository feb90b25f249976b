package thumbnail

import (
	"bytes"
	"encoding/binary"
	"image"
	"io"
)

// exifOrientation returns the EXIF orientation (1-8) of a JPEG or TIFF read from r, 1 when it
// has none or it cannot be read. It reads at most maxExifScan bytes.
func exifOrientation(k Kind, r io.Reader) int {
	const maxExifScan = 256 << 10
	b, err := io.ReadAll(io.LimitReader(r, maxExifScan))
	if err != nil && len(b) == 0 {
		return 1
	}
	switch k {
	case KindTIFF:
		return tiffOrientation(b)
	case KindJPEG:
		// Walk the markers before the image data, looking for APP1 "Exif\0\0".
		for i := 2; i+4 <= len(b); {
			if b[i] != 0xff {
				return 1
			}
			m := b[i+1]
			if m == 0xd8 || (m >= 0xd0 && m <= 0xd7) || m == 0x01 || m == 0xff {
				i += 2
				if m == 0xff {
					i-- // fill byte
				}
				continue
			}
			if m == 0xda || m == 0xd9 { // start of scan, end of image: no EXIF before
				return 1
			}
			n := int(binary.BigEndian.Uint16(b[i+2:]))
			if n < 2 || i+2+n > len(b) {
				return 1
			}
			seg := b[i+4 : i+2+n]
			if m == 0xe1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
				return tiffOrientation(seg[6:])
			}
			i += 2 + n
		}
	}
	return 1
}

// tiffOrientation reads tag 0x0112 of IFD0 of a TIFF structure (an EXIF block or a TIFF file).
func tiffOrientation(b []byte) int {
	if len(b) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(b[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 1
	}
	off := int64(bo.Uint32(b[4:]))
	if off < 8 || off+2 > int64(len(b)) {
		return 1
	}
	n := int64(bo.Uint16(b[off:]))
	for i := int64(0); i < n; i++ {
		e := off + 2 + 12*i
		if e+12 > int64(len(b)) {
			return 1
		}
		if bo.Uint16(b[e:]) != 0x0112 {
			continue
		}
		var v int
		switch bo.Uint16(b[e+2:]) {
		case 3: // SHORT
			v = int(bo.Uint16(b[e+8:]))
		case 4: // LONG
			v = int(bo.Uint32(b[e+8:]))
		}
		if v >= 1 && v <= 8 {
			return v
		}
		return 1
	}
	return 1
}

// orient applies an EXIF orientation to img, returning an image shown upright: 2 mirrors, 3
// turns 180°, 4 flips, 5 transposes, 6 turns 90° clockwise, 7 transverses, 8 turns 90°
// anticlockwise.
func orient(img *image.RGBA, o int) *image.RGBA {
	if o <= 1 || o > 8 {
		return img
	}
	w, h := img.Rect.Dx(), img.Rect.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var dx, dy int
			switch o {
			case 2:
				dx, dy = w-1-x, y
			case 3:
				dx, dy = w-1-x, h-1-y
			case 4:
				dx, dy = x, h-1-y
			case 5:
				dx, dy = y, x
			case 6:
				dx, dy = h-1-y, x
			case 7:
				dx, dy = h-1-y, w-1-x
			case 8:
				dx, dy = y, w-1-x
			}
			si, di := img.PixOffset(x, y), dst.PixOffset(dx, dy)
			copy(dst.Pix[di:di+4], img.Pix[si:si+4])
		}
	}
	return dst
}
