package ocr

import (
	"strconv"
	"strings"
)

// pageText is what tesseract read on one page.
type pageText struct {
	Text     string
	Words    int
	ConfSum  float64 // sum of the words' confidences (0-100)
	Timeout  bool    // the page ran out of time
	TSVPages int     // pages in the TSV (a multi-page TIFF has several)
}

// parseTSV reads tesseract's TSV output (level, page_num, block_num, par_num, line_num,
// word_num, left, top, width, height, conf, text): words are joined by spaces, lines by
// newlines, paragraphs and blocks by blank lines. Words with a negative confidence are layout
// rows, not words.
func parseTSV(tsv string) pageText {
	var p pageText
	var b strings.Builder
	var lastPage, lastBlock, lastPar, lastLine = -1, -1, -1, -1
	for i, row := range strings.Split(tsv, "\n") {
		if i == 0 && strings.HasPrefix(row, "level") {
			continue
		}
		f := strings.SplitN(strings.TrimRight(row, "\r"), "\t", 12)
		if len(f) < 12 || f[0] != "5" {
			continue
		}
		conf, err := strconv.ParseFloat(f[10], 64)
		word := strings.TrimSpace(f[11])
		if err != nil || conf < 0 || word == "" {
			continue
		}
		page, _ := strconv.Atoi(f[1])
		block, _ := strconv.Atoi(f[2])
		par, _ := strconv.Atoi(f[3])
		line, _ := strconv.Atoi(f[4])
		switch {
		case b.Len() == 0:
		case page != lastPage || block != lastBlock || par != lastPar:
			b.WriteString("\n\n")
		case line != lastLine:
			b.WriteByte('\n')
		default:
			b.WriteByte(' ')
		}
		if page != lastPage {
			p.TSVPages++
		}
		lastPage, lastBlock, lastPar, lastLine = page, block, par, line
		b.WriteString(word)
		p.Words++
		p.ConfSum += conf
	}
	p.Text = b.String()
	return p
}
