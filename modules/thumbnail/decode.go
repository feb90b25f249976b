package thumbnail

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
	"golang.org/x/image/webp"
)

// ErrTooLarge is wrapped by the errors of images over the configured limits.
var ErrTooLarge = errors.New("image too large")

// Limits bound what one image may cost to decode.
type Limits struct {
	// MaxPixels is the largest width × height decoded.
	MaxPixels int64
	// MaxDecodedBytes is the largest decoded size (pixels × bytes per pixel of the header's
	// colour model).
	MaxDecodedBytes int64
}

// decoders by kind: each reads one image (the first frame of an animation).
var decoders = map[Kind]struct {
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}{
	KindJPEG: {jpeg.DecodeConfig, jpeg.Decode},
	KindPNG:  {png.DecodeConfig, png.Decode},
	KindGIF:  {gif.DecodeConfig, gif.Decode}, // gif.Decode stops after the first frame
	KindWebP: {webp.DecodeConfig, webp.Decode},
	KindTIFF: {tiff.DecodeConfig, tiff.Decode},
	KindBMP:  {bmp.DecodeConfig, bmp.Decode},
}

// bytesPerPixel is what a decoder allocates per pixel for a colour model (an upper bound).
func bytesPerPixel(m color.Model) int64 {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.YCbCrModel:
		return 3
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 4
}

// checkConfig returns an error wrapping ErrTooLarge when an image of this header is over lim.
func checkConfig(cfg image.Config, lim Limits) error {
	w, h := int64(cfg.Width), int64(cfg.Height)
	if w <= 0 || h <= 0 {
		return fmt.Errorf("image header says %d×%d pixels", w, h)
	}
	px := w * h
	if px > lim.MaxPixels {
		return fmt.Errorf("%w: %d×%d is %.1f MP, over the %.1f MP limit", ErrTooLarge, w, h, float64(px)/1e6, float64(lim.MaxPixels)/1e6)
	}
	if b := px * bytesPerPixel(cfg.ColorModel); b > lim.MaxDecodedBytes {
		return fmt.Errorf("%w: %d×%d would take %d MB decoded, over the %d MB limit", ErrTooLarge, w, h, b>>20, lim.MaxDecodedBytes>>20)
	}
	return nil
}

// decodeImage reads the header of an image of kind k through open (called twice: once for
// the header, once for the pixels), refuses it when over lim, then decodes it. Reads fail
// once ctx ends, which stops the decoder.
func decodeImage(ctx context.Context, k Kind, open func() (io.ReadCloser, error), lim Limits) (image.Image, image.Config, error) {
	d, ok := decoders[k]
	if !ok {
		return nil, image.Config{}, fmt.Errorf("no decoder for %q", k)
	}
	r, err := open()
	if err != nil {
		return nil, image.Config{}, err
	}
	cfg, err := d.config(withContext(ctx, r))
	r.Close()
	if err != nil {
		return nil, cfg, decodeErr(ctx, "read "+string(k)+" header", err)
	}
	if err := checkConfig(cfg, lim); err != nil {
		return nil, cfg, err
	}
	r, err = open()
	if err != nil {
		return nil, cfg, err
	}
	defer r.Close()
	img, err := d.decode(withContext(ctx, r))
	if err != nil {
		return nil, cfg, decodeErr(ctx, "decode "+string(k), err)
	}
	// A decoder's image never exceeds its header; checked anyway, as the header was trusted.
	if b := img.Bounds(); int64(b.Dx())*int64(b.Dy()) > lim.MaxPixels {
		return nil, cfg, fmt.Errorf("%w: decoded %d×%d", ErrTooLarge, b.Dx(), b.Dy())
	}
	return img, cfg, nil
}

// decodeErr names the step, or returns the context's error when the deadline stopped it.
func decodeErr(ctx context.Context, step string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%s: %w", step, err)
}

// ctxReader fails reads once ctx ends: decoders read as they go, so they stop soon after.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ctxReaderAt is a ctxReader whose source also reads at offsets: the TIFF decoder then reads
// the parts it needs instead of the whole file.
type ctxReaderAt struct {
	ctxReader
	ra io.ReaderAt
}

func (c *ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.ra.ReadAt(p, off)
}

// withContext wraps r so that its reads fail once ctx ends.
func withContext(ctx context.Context, r io.Reader) io.Reader {
	if ra, ok := r.(io.ReaderAt); ok {
		return &ctxReaderAt{ctxReader{ctx, r}, ra}
	}
	return &ctxReader{ctx: ctx, r: r}
}
