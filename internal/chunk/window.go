package chunk

import (
	"unicode"
	"unicode/utf8"
)

// span is a piece of a segment's text: byte bounds [b0, b1) for slicing, code point bounds
// [r0, r1) for char_offset and char_length.
type span struct{ b0, b1, r0, r1 int }

// asciiSpace marks the ASCII bytes unicode.IsSpace accepts, for the common fast path.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// eachWord calls fn for every maximal run of non-whitespace (unicode.IsSpace) in text.
func eachWord(text string, fn func(span)) {
	start := span{b0: -1}
	r := 0
	for i := 0; i < len(text); r++ {
		c := text[i]
		size, space := 1, false
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
		} else {
			var ru rune
			ru, size = utf8.DecodeRuneInString(text[i:])
			space = unicode.IsSpace(ru)
		}
		switch {
		case space && start.b0 >= 0:
			fn(span{b0: start.b0, r0: start.r0, b1: i, r1: r})
			start.b0 = -1
		case !space && start.b0 < 0:
			start = span{b0: i, r0: r}
		}
		i += size
	}
	if start.b0 >= 0 {
		fn(span{b0: start.b0, r0: start.r0, b1: len(text), r1: r})
	}
}

// eachWindow calls fn for windows of size words starting at words 0, step, 2*step…, stopping
// after the first window that reaches the last word (as langchain's TokenTextSplitter does).
// It streams: memory is O(size/step), not O(words). Requires 0 < step <= size.
func eachWindow(text string, size, step int, fn func(span)) {
	var open []span // starts of windows not yet closed, oldest first
	n := 0          // words seen
	lastClosed := -1
	var last span
	eachWord(text, func(w span) {
		if n%step == 0 {
			open = append(open, span{b0: w.b0, r0: w.r0})
		}
		if first := n - size + 1; first >= 0 && first%step == 0 {
			win := open[0]
			open = open[1:]
			win.b1, win.r1 = w.b1, w.r1
			fn(win)
			lastClosed = n
		}
		last = w
		n++
	})
	// The tail: the oldest open window ends at the last word; younger ones lie inside it.
	if n > 0 && lastClosed != n-1 {
		win := open[0]
		win.b1, win.r1 = last.b1, last.r1
		fn(win)
	}
}
