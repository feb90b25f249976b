// Package chunk turns a module's "content" into chunk documents for the chunk index.
//
// ParseContent validates the content a module returned (a string, or an array of strings and
// objects with "text") into Segments; Chunks splits each segment into overlapping windows of
// whitespace-separated words. It is pure logic: no files, no index.
//
// Offsets and lengths count Unicode code points, not bytes or UTF-16 units, so that
// text == []rune(segment)[char_offset : char_offset+char_length] (Python: seg[off:off+len];
// JavaScript: Array.from(seg).slice(off, off+len).join("")).
package chunk
