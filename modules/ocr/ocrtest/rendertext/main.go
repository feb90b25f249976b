// Command rendertext draws text into a PNG with a real font (package ocrtest), like a scanned
// page: rendertext -o page.png "some words". The demo makes its scanned receipt with it.
package main

import (
	"flag"
	"fmt"
	"image/png"
	"os"
	"strings"

	"github.com/homeindex/homeindex/modules/ocr/ocrtest"
)

func main() {
	out := flag.String("o", "page.png", "output PNG")
	width := flag.Int("width", 1700, "width in pixels")
	flag.Parse()
	img, err := ocrtest.Render(ocrtest.Page{Text: strings.Join(flag.Args(), "\n"), Width: *width})
	if err == nil {
		var f *os.File
		if f, err = os.Create(*out); err == nil {
			err = png.Encode(f, img)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rendertext:", err)
		os.Exit(1)
	}
}
