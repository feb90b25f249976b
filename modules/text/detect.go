package text

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
)

// format is one family of files the module reads.
type format struct {
	name string
	// plain formats are read as a bounded prefix whatever the file's size.
	plain bool
	read  func(ctx context.Context, src *source, d *Doc) error
}

var (
	formatsMu sync.RWMutex // formats is written by init functions, and by tests
	formats   = map[string]*format{}
)

func register(f *format) *format {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	formats[f.name] = f
	return f
}

// formatNamed returns the format called name, nil if none.
func formatNamed(name string) *format {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	return formats[name]
}

// byType maps media types (parameters dropped) to formats; byExt maps lower-case extensions.
var byType, byExt map[string]string

func init() {
	byType = map[string]string{
		"text/plain": "plain", "text/markdown": "markdown", "text/x-markdown": "markdown",
		"text/csv": "csv", "text/tab-separated-values": "tsv",
		"application/json": "json", "application/ld+json": "json", "application/geo+json": "json",
		"text/xml": "xml", "application/xml": "xml", "image/svg+xml": "xml", "application/rss+xml": "xml", "application/atom+xml": "xml",
		"text/html": "html", "application/xhtml+xml": "html",
		"application/pdf": "pdf",
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   "docx",
		"application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
		"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         "xlsx",
		"application/vnd.oasis.opendocument.text":                                   "odt",
		"application/vnd.oasis.opendocument.spreadsheet":                            "ods",
		"application/vnd.oasis.opendocument.presentation":                           "odp",
		"application/epub+zip": "epub",
		"text/rtf":             "rtf", "application/rtf": "rtf",
	}
	byExt = map[string]string{
		".txt": "plain", ".text": "plain", ".log": "plain", ".ini": "plain", ".cfg": "plain", ".conf": "plain",
		".md": "markdown", ".markdown": "markdown", ".mdown": "markdown", ".rst": "plain", ".org": "plain", ".tex": "plain",
		".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
		".json": "json", ".geojson": "json", ".jsonld": "json",
		".xml": "xml", ".svg": "xml", ".rss": "xml", ".atom": "xml", ".xsd": "xml", ".xsl": "xml", ".gpx": "xml", ".kml": "xml",
		".html": "html", ".htm": "html", ".xhtml": "html", ".xht": "html",
		".pdf":  "pdf",
		".docx": "docx", ".docm": "docx", ".pptx": "pptx", ".pptm": "pptx", ".xlsx": "xlsx", ".xlsm": "xlsx",
		".odt": "odt", ".ods": "ods", ".odp": "odp", ".epub": "epub", ".rtf": "rtf",
		".jsonl": "plain", ".ndjson": "plain", ".yaml": "plain", ".yml": "plain", ".toml": "plain", ".sql": "plain",
		".srt": "plain", ".vtt": "plain", ".properties": "plain", ".env": "plain",
	}
	for _, ext := range strings.Fields(`.go .c .h .cc .cpp .cxx .hpp .hh .cs .java .kt .kts .scala .swift .m .mm
		.rs .py .pyw .rb .pl .pm .php .lua .r .jl .hs .ml .mli .ex .exs .erl .clj .cljs .dart .zig .nim .v
		.js .mjs .cjs .ts .tsx .jsx .vue .svelte .css .scss .sass .less
		.sh .bash .zsh .fish .ps1 .bat .cmd .mk .cmake .gradle .proto .graphql .tf .nix .el .vim .asm .s
		.f .f90 .pas .d .groovy .coffee .elm .fs .fsx .ipynb .diff .patch`) {
		if ext == ".ipynb" {
			byExt[ext] = "json"
			continue
		}
		byExt[ext] = "code"
	}
	for _, n := range []string{"makefile", "dockerfile", "readme", "license", "copying", "changelog", "authors", "notice", "todo"} {
		byExt[n] = "plain"
	}
}

// detect returns the format of a file with media type typ at path, nil if the module does not
// read it. The extension decides where it is specific (a .docx is a zip by type, a .md plain
// text); the type decides for files without a known extension. Generic text types (text/*)
// are read as plain text.
func detect(typ, path string) *format {
	base := strings.ToLower(filepath.Base(path))
	ext := filepath.Ext(base)
	if ext == "" {
		ext = base // Makefile, README
	}
	mt := strings.ToLower(strings.TrimSpace(strings.SplitN(typ, ";", 2)[0]))
	if name, ok := byExt[ext]; ok {
		return formatNamed(name)
	}
	if name, ok := byType[mt]; ok {
		return formatNamed(name)
	}
	if strings.HasPrefix(mt, "text/") {
		return formatNamed("plain")
	}
	if strings.HasSuffix(mt, "+xml") {
		return formatNamed("xml")
	}
	if strings.HasSuffix(mt, "+json") {
		return formatNamed("json")
	}
	return nil
}
