// Package ocrtest draws text into images with a real font, as a scanner would see a printed
// page, for tests, benchmarks and the demo of the OCR module: the words can then only be
// found by reading the pixels.
package ocrtest

import (
	"fmt"
	"image"
	"image/draw"
	"os"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// FontPath is DejaVu Sans as Debian's fonts-dejavu-core installs it.
const FontPath = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

// Page describes an image to draw.
type Page struct {
	Text     string  // words, wrapped to fit Width; "\n" starts a new paragraph
	Width    int     // pixels (default 1700: A4 width at 200 DPI)
	Height   int     // pixels; 0 fits the text
	FontSize float64 // pixels per em (default 34, about 12 pt at 200 DPI)
	Margin   int     // pixels (default 100)
	FontFile string  // a TrueType/OpenType font (default FontPath)
}

// Render draws p as black text on white, in grey.
func Render(p Page) (*image.Gray, error) {
	if p.Width == 0 {
		p.Width = 1700
	}
	if p.FontSize == 0 {
		p.FontSize = 34
	}
	if p.Margin == 0 {
		p.Margin = 100
	}
	if p.FontFile == "" {
		p.FontFile = FontPath
	}
	b, err := os.ReadFile(p.FontFile)
	if err != nil {
		return nil, fmt.Errorf("font: %w (Debian: fonts-dejavu-core)", err)
	}
	f, err := opentype.Parse(b)
	if err != nil {
		return nil, err
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: p.FontSize, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil, err
	}
	defer face.Close()
	// Wrap the words into lines.
	d := &font.Drawer{Face: face}
	maxW := fixed.I(p.Width - 2*p.Margin)
	var lines []string
	for _, para := range strings.Split(p.Text, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			try := strings.TrimSpace(line + " " + w)
			if line != "" && d.MeasureString(try) > maxW {
				lines = append(lines, line)
				try = w
			}
			line = try
		}
		lines = append(lines, line, "")
	}
	m := face.Metrics()
	lh := (m.Height * 3 / 2).Ceil()
	h := p.Height
	if h == 0 {
		h = 2*p.Margin + lh*len(lines)
	}
	img := image.NewGray(image.Rect(0, 0, p.Width, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	d.Dst, d.Src = img, image.Black
	for i, l := range lines {
		d.Dot = fixed.P(p.Margin, p.Margin+m.Ascent.Ceil()+i*lh)
		d.DrawString(l)
	}
	return img, nil
}
