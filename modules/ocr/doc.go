// Package ocr is the OCR module: it reads the text in photos, scans and PDF pages without a
// text layer with the Tesseract command line (Debian tesseract-ocr) and returns it as content,
// one segment per page carrying its "page", so search finds words that exist only in pixels.
//
// Images are passed to tesseract only when their first bytes are a recognised image format
// (JPEG, PNG, GIF, WebP, TIFF, BMP), through its standard input: tesseract reads any other
// input as a list of file names to open. Their header's size is checked first (MaxPixels).
//
// PDFs are read page by page: pdftotext (poppler-utils) gives every page's text layer in one
// call; pages with text are left to the text module, the others are drawn by pdftoppm at DPI
// (lowered for huge pages so a page stays under MaxPixels) and read by tesseract. At most
// MaxPages pages are read per file; reaching the cap is recorded and logged. Each page runs
// under its own timeout (PageTimeout, and never past the job's deadline); when too little time
// is left for another page, the module stops and returns the pages done, recording why.
// Progress goes to log.txt, one line per page.
//
// The document gets "ocr": languages, pages read, words, mean word confidence (tesseract's
// TSV output), and why it stopped early, if it did.
package ocr
