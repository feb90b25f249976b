// Package text is the text module: it extracts searchable text and document fields from plain
// text (UTF-8, UTF-16 with a byte-order mark, Windows-1252), Markdown, CSV/TSV, JSON, XML,
// HTML/XHTML, source code, PDF, DOCX, PPTX, XLSX, ODT/ODS/ODP, EPUB and RTF.
//
// Content is returned as sdk.Segments; a segment carries its position where the format has
// one: "page" (PDF, 1-based), "sheet" (spreadsheet name), "slide" (1-based), "chapter" (EPUB,
// 1-based, with "chapter_title" when the chapter has one). Document fields go under "text":
//
//	text.format        pdf, docx, html, plain, ...
//	text.title         from the file's own metadata (or an HTML <title>, a Markdown heading)
//	text.author
//	text.language      ISO 639-1, from the metadata or guessed from common words
//	text.pages         PDF pages, DOCX/ODT pages as the producer counted them, slides
//	text.words         words in the extracted text
//	text.created, text.modified            RFC 3339, from the file's metadata
//	text.created_unix, text.modified_unix  the same as Unix seconds (sortable)
//	text.truncated     set (with the reason) when a limit cut the text short
//	text.encoding      for plain text: utf-8, utf-16le, utf-16be or windows-1252
//
// Check decides from the document's type, the file's extension and its size, without opening
// the file. Run never trusts the file: every parser runs under Limits (bytes of text kept,
// decompressed bytes and entries of a zip container, nesting depth), a panic inside a parser
// becomes a permanent failure of that file, and a file that vanished or is not a regular file
// is a permanent failure with its reason. The module writes nothing but the SDK's log.txt in
// its own by-id/<id>/text/ directory.
package text
