// Command ocr-module is the OCR module (package modules/ocr) on the SDK: Tesseract on photos,
// scans and PDF pages without a text layer. Besides the SDK's variables it reads
// OCR_LANGUAGES, OCR_MAX_PAGES, OCR_DPI, OCR_PAGE_TIMEOUT and OCR_MAX_PIXELS. At start it asks
// tesseract for its languages: a missing one (or a missing tesseract) exits 2, naming the
// Debian package to install.
package main

import (
	"context"
	"os"
	"time"

	"github.com/homeindex/homeindex/modules/ocr"
	"github.com/homeindex/homeindex/sdk"
	"github.com/rs/zerolog"
)

func main() {
	// Before the tesseract probe: --help answers where tesseract is not installed.
	if sdk.HelpAsked(os.Args[1:]) {
		_ = sdk.PrintHelp(os.Stdout, "ocr-module", "Reads the text of photos, scans and PDF pages without a text layer with tesseract\n"+
			"(Debian: tesseract-ocr, and poppler-utils for PDFs).", ocr.Environment()...)
		return
	}
	log := zerolog.New(os.Stderr).With().Timestamp().Str("module", "ocr").Logger()
	cfg, err := ocr.LoadConfig(os.Getenv)
	if err != nil {
		log.WithLevel(zerolog.FatalLevel).Err(err).Msg("invalid configuration")
		os.Exit(sdk.ExitConfig)
	}
	m := ocr.New(cfg)
	if m.Config().Tesseract == "" {
		log.WithLevel(zerolog.FatalLevel).Msg("tesseract not found in PATH: install the Debian package tesseract-ocr")
		os.Exit(sdk.ExitConfig)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = ocr.CheckLanguages(ctx, m.Config().Tesseract, m.Config().Languages)
	cancel()
	if err != nil {
		log.WithLevel(zerolog.FatalLevel).Err(err).Msg("invalid configuration")
		os.Exit(sdk.ExitConfig)
	}
	if c := m.Config(); c.PDFToText == "" || c.PDFToPPM == "" || c.PDFInfo == "" {
		log.Warn().Msg("pdftotext, pdftoppm or pdfinfo (poppler-utils) not found: PDFs are not read")
	}
	log.Info().Strs("languages", cfg.Languages).Int("max_pages", cfg.MaxPages).Msg("tesseract ready")
	sdk.Main(m)
}
