package thumbnail

import (
	"image"
	"image/color"
)

// fitWithin returns the size of a w×h image scaled to fit in a max×max square, keeping its
// aspect ratio; images already inside keep their size (never enlarged).
func fitWithin(w, h, limit int) (int, int) {
	if w <= limit && h <= limit {
		return w, h
	}
	if w >= h {
		return limit, max(1, (h*limit+w/2)/w)
	}
	return max(1, (w*limit+h/2)/h), limit
}

// shrink scales src down to dw×dh by area averaging: every source pixel is added to the one
// destination pixel it falls in, so each source pixel is read once. Transparent parts are put
// on white (thumbnails are JPEG). YCbCr sources (every JPEG) are averaged in YCbCr and
// converted once per destination pixel.
func shrink(src image.Image, dw, dh int) *image.RGBA {
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	if sw == 0 || sh == 0 {
		return dst
	}
	// xmap[sx] is the destination column of source column sx; count[dx] how many map there.
	xmap := make([]int32, sw)
	for sx := range xmap {
		xmap[sx] = int32(sx * dw / sw)
	}
	acc := &accum{a: make([]uint32, 3*dw), n: make([]uint32, dw)}
	sy := 0
	for dy := 0; dy < dh; dy++ {
		end := (dy + 1) * sh / dh
		if end <= sy { // upscaling never happens, but keep every row filled
			end = min(sy+1, sh)
		}
		clear(acc.a)
		clear(acc.n)
		for ; sy < end; sy++ {
			addRow(src, b.Min.X, b.Min.Y+sy, xmap, acc)
		}
		acc.emit(dst.Pix[dy*dst.Stride:dy*dst.Stride+4*dw], src)
	}
	return dst
}

// accum holds one destination row's sums: three channels (YCbCr or RGB) and a count.
type accum struct {
	a []uint32
	n []uint32
}

// emit writes the averages of a row as opaque RGBA pixels.
func (acc *accum) emit(out []byte, src image.Image) {
	_, ycc := src.(*image.YCbCr)
	for dx := range acc.n {
		n := acc.n[dx]
		if n == 0 {
			n = 1
		}
		c0, c1, c2 := (acc.a[3*dx]+n/2)/n, (acc.a[3*dx+1]+n/2)/n, (acc.a[3*dx+2]+n/2)/n
		if ycc {
			r, g, b := color.YCbCrToRGB(uint8(c0), uint8(c1), uint8(c2))
			c0, c1, c2 = uint32(r), uint32(g), uint32(b)
		}
		out[4*dx], out[4*dx+1], out[4*dx+2], out[4*dx+3] = uint8(c0), uint8(c1), uint8(c2), 0xff
	}
}

// addRow adds source row y to acc, with fast paths for the decoders' usual image types.
func addRow(src image.Image, x0, y int, xmap []int32, acc *accum) {
	a, n := acc.a, acc.n
	switch s := src.(type) {
	case *image.YCbCr:
		// x0 is s.Rect.Min.X: source column sx is Y[row+sx] and chroma column
		// (x0+sx)>>shift - x0>>shift of its chroma row.
		yrow := s.Y[s.YOffset(x0, y):]
		cbase := s.COffset(x0, y)
		shift := chromaShift(s.SubsampleRatio)
		for sx, dx := range xmap {
			ci := cbase + (x0+sx)>>shift - x0>>shift
			a[3*dx] += uint32(yrow[sx])
			a[3*dx+1] += uint32(s.Cb[ci])
			a[3*dx+2] += uint32(s.Cr[ci])
			n[dx]++
		}
	case *image.Gray:
		p := s.Pix[s.PixOffset(x0, y):]
		for sx, dx := range xmap {
			v := uint32(p[sx])
			a[3*dx] += v
			a[3*dx+1] += v
			a[3*dx+2] += v
			n[dx]++
		}
	case *image.RGBA: // premultiplied: over white adds 255-alpha
		p := s.Pix[s.PixOffset(x0, y):]
		for sx, dx := range xmap {
			q := p[4*sx : 4*sx+4 : 4*sx+4]
			w := 255 - uint32(q[3])
			a[3*dx] += uint32(q[0]) + w
			a[3*dx+1] += uint32(q[1]) + w
			a[3*dx+2] += uint32(q[2]) + w
			n[dx]++
		}
	case *image.NRGBA:
		p := s.Pix[s.PixOffset(x0, y):]
		for sx, dx := range xmap {
			q := p[4*sx : 4*sx+4 : 4*sx+4]
			al := uint32(q[3])
			w := 255 - al
			a[3*dx] += (uint32(q[0])*al+127)/255 + w
			a[3*dx+1] += (uint32(q[1])*al+127)/255 + w
			a[3*dx+2] += (uint32(q[2])*al+127)/255 + w
			n[dx]++
		}
	case *image.Paletted:
		pal := make([][3]uint32, len(s.Palette))
		for i, c := range s.Palette {
			r, g, b, al := c.RGBA()
			w := 0xffff - al
			pal[i] = [3]uint32{(r + w) >> 8, (g + w) >> 8, (b + w) >> 8}
		}
		p := s.Pix[s.PixOffset(x0, y):]
		for sx, dx := range xmap {
			var c [3]uint32
			if int(p[sx]) < len(pal) {
				c = pal[p[sx]]
			}
			a[3*dx] += c[0]
			a[3*dx+1] += c[1]
			a[3*dx+2] += c[2]
			n[dx]++
		}
	default:
		for sx, dx := range xmap {
			r, g, b, al := src.At(x0+sx, y).RGBA()
			w := 0xffff - al
			a[3*dx] += (r + w) >> 8
			a[3*dx+1] += (g + w) >> 8
			a[3*dx+2] += (b + w) >> 8
			n[dx]++
		}
	}
}

// chromaShift is log2 of the horizontal chroma subsampling of a YCbCr image.
func chromaShift(r image.YCbCrSubsampleRatio) uint {
	switch r {
	case image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420:
		return 1
	case image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410:
		return 2
	}
	return 0
}
