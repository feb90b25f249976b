package search

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// This file is the search a person runs: one query over the files index and the chunks
// index together. A hit is a file (one per content); files match by their own fields or by
// the text modules produced for them (chunks), and the best chunks give snippets. Both
// backends implement fileSearcher; everything they must agree on (derived fields, sort
// orders, snippets, facet values) is written once, here.

// Derived fields: computed when a document is written to the files index (PrepareFile), so
// both backends filter, sort and count them without parsing anything at query time.
const (
	FieldKind      = "kind"       // image, video, audio, document, text or other
	FieldExtension = "extension"  // lower-case extension of the first path, without the dot
	FieldDrive     = "drive"      // archive drive names of the copies; LocalDrive for the main tree
	FieldYear      = "year"       // year of FieldDate (UTC)
	FieldDate      = "date"       // Unix seconds: the date a photo was taken when a module gave one, else mtime
	FieldCamera    = "camera"     // camera make and model, when a module gave them
	FieldName      = "name"       // base name of the first path
	FieldSortName  = "sort_name"  // FieldName in lower case, for the name sort
	FieldPathsList = "paths_list" // (core) every path
	// fieldPathEntries holds the paths object as an array of {path, mtime}: the index never
	// keys an object by path (Meilisearch allows at most 65,535 distinct field names per
	// index). Hits give the object back as "paths".
	fieldPathEntries = "path_entries"
	fieldPaths       = "paths"
)

// LocalDrive is the drive facet value of a copy in the main tree (not on an archive drive).
const LocalDrive = "local"

// DerivedFilterable and DerivedSortable are the derived attributes the files index must
// declare (FileSettings adds them).
var (
	DerivedFilterable = []string{FieldKind, FieldExtension, FieldDrive, FieldYear, FieldDate, FieldCamera, "id"}
	DerivedSortable   = []string{FieldDate, FieldSortName, "size", "id"}
)

// DefaultFacets are the facets a search counts when the caller names none.
var DefaultFacets = []string{FieldKind, FieldExtension, FieldDrive, FieldYear, FieldCamera, "offline"}

// FileSettings returns s plus the derived attributes.
func FileSettings(s Settings) Settings {
	return Settings{
		Filterable: append(slices.Clone(s.Filterable), DerivedFilterable...),
		Sortable:   append(slices.Clone(s.Sortable), DerivedSortable...),
	}
}

// ChunkSettings are the chunks index settings SearchFiles relies on.
var ChunkSettings = Settings{Filterable: []string{"file_id", "module"}, Sortable: []string{"index", "id"}}

// PrepareFile turns a metadata document into its files index form: the paths object becomes
// an array (path_entries) and the derived fields are added. archiveRel is the archive
// directory relative to the files root ("archive"); a path below it is on the drive named by
// its next element.
//
// Every document the outbox indexes comes through here (each module hop writes it again), so
// the document is held as its members in key order rather than a map, and the derived values
// are written by hand; the bytes are json.Marshal's (TestPrepareFileMatchesReference).
func PrepareFile(raw json.RawMessage, archiveRel string) (json.RawMessage, error) {
	doc := make(members, 0, 24)
	err := protocol.EachMember(raw, func(k string, v json.RawMessage) error {
		doc = append(doc, member{k, v})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalidDocument)
	}
	doc = doc.sorted()
	var paths []pathEntry
	if p, ok := doc.get(fieldPaths); ok {
		var err error
		if paths, err = decodePaths(p); err != nil {
			return nil, fmt.Errorf("%w: paths: %w", ErrInvalidDocument, err)
		}
	}
	doc = slices.DeleteFunc(doc, func(m member) bool {
		switch m.key {
		case FieldKind, FieldExtension, FieldDrive, FieldYear, FieldDate, FieldCamera, FieldName, FieldSortName:
			return true
		case fieldPaths, fieldPathEntries:
			return paths != nil // path_entries is replaced when there are paths
		}
		return false
	})
	n := len(doc)
	if paths != nil {
		doc = append(doc, member{fieldPathEntries, pathEntriesJSON(paths)})
	}
	first := ""
	if len(paths) > 0 {
		first = paths[0].Path
	}
	name := path.Base(first)
	if first == "" {
		name = ""
	}
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i > 0 && i < len(name)-1 {
		ext = strings.ToLower(name[i+1:])
	}
	mimeRaw, _ := doc[:n].get(protocol.FieldType)
	doc = append(doc, member{FieldKind, jsonString(nil, Kind(jsonStringValue(mimeRaw), ext))})
	if ext != "" {
		doc = append(doc, member{FieldExtension, jsonString(nil, ext)})
	}
	if name != "" {
		doc = append(doc, member{FieldName, jsonString(nil, name)}, member{FieldSortName, jsonString(nil, strings.ToLower(name))})
	}
	var drives []string
	for _, p := range paths {
		d := driveOf(p.Path, archiveRel)
		if !slices.Contains(drives, d) {
			drives = append(drives, d)
		}
	}
	if len(drives) > 0 {
		slices.Sort(drives)
		b := []byte{'['}
		for i, d := range drives {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonString(b, d)
		}
		doc = append(doc, member{FieldDrive, append(b, ']')})
	}
	mtimeRaw, _ := doc[:n].get(protocol.FieldMtime)
	mtime := jsonNumberValue(mtimeRaw)
	date, camera := moduleDateAndCamera(doc[:n])
	if date == nil && mtime != 0 {
		date = &mtime
	}
	if date != nil {
		day := math.Floor(*date)
		doc = append(doc, member{FieldDate, protocol.AppendJSONNumber(nil, day)},
			member{FieldYear, strconv.AppendInt(nil, int64(time.Unix(int64(day), 0).UTC().Year()), 10)})
	}
	if camera != "" {
		doc = append(doc, member{FieldCamera, jsonString(nil, camera)})
	}
	return marshalObject(doc.mergeTail(n)), nil
}

// mergeTail puts m in key order when its first n members are (sorted) and the rest, a few,
// have keys none of those has: PrepareFile's derived fields after the document's own. It sorts
// the few and merges them in from the back, where sorting the whole document again was a tenth
// of PrepareFile.
func (m members) mergeTail(n int) members {
	var spare [16]member
	tail := append(spare[:0], m[n:]...)
	slices.SortFunc(tail, func(a, b member) int { return strings.Compare(a.key, b.key) })
	i, j := n-1, len(tail)-1
	for k := len(m) - 1; j >= 0; k-- {
		if i >= 0 && m[i].key > tail[j].key {
			m[k], i = m[i], i-1
		} else {
			m[k], j = tail[j], j-1
		}
	}
	return m
}

// members is an object's members (member: names.go); sorted, it is in key order with each
// key once.
type members []member

// sorted sorts m by key and keeps the last member of a key given twice, as decoding into a
// map does.
func (m members) sorted() members { return keyOrder(m, func(x member) string { return x.key }) }

// keyOrder sorts xs by key, stably, and keeps the last of a key given twice, as decoding into
// a map does: an object's members, in place. json.Marshal's objects are in order already.
func keyOrder[T any](xs []T, key func(T) string) []T {
	byKey := func(a, b T) int { return strings.Compare(key(a), key(b)) }
	if !slices.IsSortedFunc(xs, byKey) {
		slices.SortStableFunc(xs, byKey)
	}
	out := xs[:0]
	for i, x := range xs {
		if i+1 < len(xs) && key(xs[i+1]) == key(x) {
			continue
		}
		out = append(out, x)
	}
	return out
}

// get returns the value of key in sorted members.
func (m members) get(key string) (json.RawMessage, bool) {
	i, ok := slices.BinarySearchFunc(m, key, func(x member, k string) int { return strings.Compare(x.key, k) })
	if !ok {
		return nil, false
	}
	return m[i].value, true
}

// marshalObject returns what json.Marshal gives for doc (sorted members: keys in order,
// values compacted, <, >, & and U+2028/U+2029 escaped), without its reflection and its
// validation of every value (a module hop writes each document again): the values were
// scanned by protocol.EachMember or written here, so they are valid JSON, and the keys valid
// UTF-8, which AppendName escapes as encoding/json does.
func marshalObject(doc members) json.RawMessage {
	size := 2
	for _, m := range doc {
		size += len(m.key) + len(m.value) + 4
	}
	b := make([]byte, 1, size)
	b[0] = '{'
	for i, m := range doc {
		if i > 0 {
			b = append(b, ',')
		}
		b = protocol.AppendName(b, m.key)
		b = append(b, ':')
		b = append(b, m.value...)
	}
	b = append(b, '}')
	if out, err := protocol.AsMarshaled(b); err == nil { // b is valid: err is never set
		b = out
	}
	return b
}

// jsonString appends s as encoding/json writes a string (marshalObject escapes <, > and &
// afterwards): printable ASCII as it is, anything else through encoding/json.
func jsonString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return append(b, mustJSON(s)...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// jsonStringValue is the string raw holds, "" when it holds none (json.Unmarshal's result).
func jsonStringValue(raw json.RawMessage) string {
	var s string
	_ = protocol.DecodeString(raw, &s)
	return s
}

// jsonNumberValue is the number raw holds, 0 when it holds none or one a float64 cannot hold
// (json.Unmarshal's result).
func jsonNumberValue(raw json.RawMessage) float64 {
	if len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		if x, err := strconv.ParseFloat(string(raw), 64); err == nil {
			return x
		}
	}
	var x float64
	_ = json.Unmarshal(raw, &x)
	return x
}

// restoreFile turns a files index hit back into the metadata document's shape: path_entries
// becomes the paths object again, in order.
func restoreFile(raw json.RawMessage) json.RawMessage {
	var doc map[string]json.RawMessage
	if json.Unmarshal(raw, &doc) != nil {
		return raw
	}
	pe, ok := doc[fieldPathEntries]
	if !ok {
		return raw
	}
	var paths []struct {
		Path  protocol.Name `json:"path"`
		Mtime float64       `json:"mtime"`
	}
	if json.Unmarshal(pe, &paths) != nil {
		return raw
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range paths {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(protocol.AppendName(nil, string(p.Path)))
		b.WriteByte(':')
		b.Write(mustJSON(p.Mtime))
	}
	b.WriteByte('}')
	delete(doc, fieldPathEntries)
	doc[fieldPaths] = b.Bytes()
	out, err := json.Marshal(doc)
	if err != nil {
		return raw
	}
	return out
}

type pathEntry struct {
	Path  string  `json:"path"`
	Mtime float64 `json:"mtime"`
}

// pathEntriesJSON writes path_entries with each name's exact bytes (PEP 383 escapes), which
// the index form (names.go) turns into display text plus paths_exact.
func pathEntriesJSON(paths []pathEntry) json.RawMessage {
	b := []byte{'['}
	for i, p := range paths {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"path":`...)
		b = protocol.AppendName(b, p.Path)
		b = append(b, `,"mtime":`...)
		b = protocol.AppendJSONNumber(b, p.Mtime)
		b = append(b, '}')
	}
	return append(b, ']')
}

// decodePaths reads a {path: mtime} object in key order, names as their exact bytes (PEP 383
// escapes in the JSON, see protocol.Name).
func decodePaths(raw json.RawMessage) ([]pathEntry, error) {
	var ps protocol.Paths
	// Called directly: json.Unmarshal would validate raw before the method validates it again.
	if err := ps.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	out := make([]pathEntry, 0, len(ps))
	for _, p := range ps {
		out = append(out, pathEntry{Path: p.Path, Mtime: p.Mtime})
	}
	return out, nil
}

func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		panic(err) // only called with encodable values
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// driveOf returns the drive of a path: the archive drive it is on, else LocalDrive.
func driveOf(p, archiveRel string) string {
	if archiveRel != "" && strings.HasPrefix(p, archiveRel+"/") {
		rest := p[len(archiveRel)+1:]
		if i := strings.IndexByte(rest, '/'); i > 0 {
			return rest[:i]
		}
	}
	return LocalDrive
}

// moduleDateAndCamera looks through the module fields (objects, in key order) for the first
// date taken ("date_unix") and camera ("camera", else "camera_make" and "camera_model").
// doc is sorted.
func moduleDateAndCamera(doc members) (*float64, string) {
	var date *float64
	camera := ""
	for _, m := range doc {
		if len(m.value) == 0 || m.value[0] != '{' || !mayNameDateOrCamera(m.value) {
			continue
		}
		var f struct {
			DateUnix    *float64 `json:"date_unix"`
			Camera      string   `json:"camera"`
			CameraMake  string   `json:"camera_make"`
			CameraModel string   `json:"camera_model"`
		}
		if json.Unmarshal(m.value, &f) != nil {
			continue
		}
		if date == nil && f.DateUnix != nil {
			date = f.DateUnix
		}
		if camera == "" {
			camera = strings.TrimSpace(f.Camera)
			if camera == "" {
				camera = strings.TrimSpace(strings.TrimSpace(f.CameraMake) + " " + strings.TrimSpace(f.CameraModel))
			}
		}
	}
	return date, camera
}

// mayNameDateOrCamera reports whether an object could hold one of moduleDateAndCamera's keys,
// which encoding/json matches in any case: "_unix" or "camera" in any ASCII case, or a \u
// escape, which could spell them. Other objects (most module fields) are not decoded.
func mayNameDateOrCamera(obj []byte) bool {
	for i, c := range obj {
		switch {
		case c == '_' && hasFoldPrefix(obj[i:], "_unix"), c|0x20 == 'c' && hasFoldPrefix(obj[i:], "camera"):
			return true
		case c == '\\' && i+1 < len(obj) && obj[i+1] == 'u':
			return true
		}
	}
	return false
}

// hasFoldPrefix reports whether b starts with the lower-case ASCII word w in any case.
func hasFoldPrefix(b []byte, w string) bool {
	if len(b) < len(w) {
		return false
	}
	for i := range len(w) {
		if c := b[i]; c != w[i] && (c|0x20 != w[i] || w[i] < 'a' || w[i] > 'z') {
			return false
		}
	}
	return true
}

// Kind maps a MIME type and extension to image, video, audio, document, text or other.
func Kind(mime, ext string) string {
	mime = strings.ToLower(strings.TrimSpace(mime))
	if i := strings.IndexByte(mime, ';'); i >= 0 {
		mime = strings.TrimSpace(mime[:i])
	}
	switch {
	case strings.HasPrefix(mime, "image/"):
		return "image"
	case strings.HasPrefix(mime, "video/"):
		return "video"
	case strings.HasPrefix(mime, "audio/"):
		return "audio"
	}
	if k, ok := extKinds[ext]; ok {
		return k
	}
	switch {
	case mime == "application/pdf", strings.Contains(mime, "officedocument"), strings.Contains(mime, "opendocument"),
		mime == "application/msword", mime == "application/rtf", mime == "application/epub+zip":
		return "document"
	case strings.HasPrefix(mime, "text/"), mime == "application/json", mime == "application/xml":
		return "text"
	}
	return "other"
}

var extKinds = func() map[string]string {
	m := map[string]string{}
	for kind, exts := range map[string]string{
		"image":    "jpg jpeg png gif webp tif tiff bmp heic heif avif dng cr2 nef arw svg",
		"video":    "mp4 m4v mov mkv webm avi wmv mpg mpeg 3gp",
		"audio":    "mp3 flac m4a aac ogg opus wav wma aiff",
		"document": "pdf doc docx odt rtf epub ppt pptx odp xls xlsx ods pages key numbers",
		"text":     "txt md markdown csv tsv json xml html htm yaml yml log ini conf go py js ts c h rs java sh",
	} {
		for _, e := range strings.Fields(exts) {
			m[e] = kind
		}
	}
	return m
}()

// FileQuery is one search over files and their module content.
type FileQuery struct {
	// Q is the text query: every word must occur in the file's own fields, or all of them in
	// one chunk of its content; the last word matches as a prefix unless Q ends with a space.
	Q string
	// Filters are Meilisearch filter expressions over the files index, all of which must hold.
	Filters []string
	// Sort is one of SortOrders ("" is relevance) or "attribute:asc|desc" on a sortable
	// attribute. Ties are broken by id, so paging is stable.
	Sort string
	// Limit (0: DefaultLimit, at most MaxLimit) and Offset pick the page.
	Limit, Offset int
	// Facets names the attributes to count (nil: none; each must be filterable).
	Facets []string
	// Snippets is the number of snippets per hit (0: none, at most MaxSnippets).
	Snippets int
}

// MaxSnippets is the most snippets a hit carries.
const MaxSnippets = 3

// SortOrders are the named sort orders and the clauses they stand for.
var SortOrders = map[string][]string{
	"relevance": {FieldDate + ":desc"},
	"newest":    {FieldDate + ":desc"},
	"oldest":    {FieldDate + ":asc"},
	"largest":   {"size:desc"},
	"smallest":  {"size:asc"},
	"name":      {FieldSortName + ":asc"},
}

// sortClauses resolves FileQuery.Sort (without the id tie-break).
func (q FileQuery) sortClauses() ([]string, error) {
	s := strings.TrimSpace(q.Sort)
	if s == "" {
		s = "relevance"
	}
	if c, ok := SortOrders[s]; ok {
		return c, nil
	}
	if strings.Contains(s, ":") {
		return strings.Split(s, ","), nil
	}
	return nil, fmt.Errorf("%w: sort %q: want relevance, newest, oldest, largest, smallest, name or attribute:asc|desc", ErrInvalidFilter, s)
}

// filter joins the filters with AND.
func (q FileQuery) filter() string {
	var parts []string
	for _, f := range q.Filters {
		if strings.TrimSpace(f) != "" {
			parts = append(parts, "("+f+")")
		}
	}
	return strings.Join(parts, " AND ")
}

// FileResult is the answer to a FileQuery.
type FileResult struct {
	// Total is the exact number of matching files.
	Total int64     `json:"total"`
	Hits  []FileHit `json:"hits"`
	// Facets counts, per requested attribute, the matching files by value (most frequent
	// first, then by value). Values are lower case, numbers in decimal.
	Facets map[string][]FacetCount `json:"facets"`
}

// FileHit is one matching file.
type FileHit struct {
	// Doc is the file's document as the index holds it, paths as an object.
	Doc      json.RawMessage `json:"doc"`
	Snippets []Snippet       `json:"snippets"`
}

// Snippet is a piece of module content around the query's words.
type Snippet struct {
	Module string `json:"module"`
	// Location says where in the file the text is: the chunk's page, sheet, slide, chapter,
	// time_offset and time_length when its module gave them, and its segment number.
	Location map[string]json.RawMessage `json:"location"`
	// Parts is the text, cut into pieces that do and do not match a query word: clients write
	// each as text and mark the matching ones.
	Parts []Part `json:"parts"`
}

// Part is a piece of a snippet.
type Part struct {
	Text  string `json:"text"`
	Match bool   `json:"match"`
}

// FacetCount is one facet value and the number of matching files that have it.
type FacetCount struct {
	Value string `json:"value"`
	Count int64  `json:"count"`
	// Online says, for a value of the drive facet, whether that drive is plugged in now
	// (IndexSearcher.Drives); absent for other facets.
	Online *bool `json:"online,omitempty"`
}

// fileSearcher is implemented by both backends.
type fileSearcher interface {
	searchFiles(ctx context.Context, q FileQuery, sort []string, named bool) (FileResult, error)
}

// SearchFiles runs q on ix.
func SearchFiles(ctx context.Context, ix Index, q FileQuery) (FileResult, error) {
	fs, ok := ix.(fileSearcher)
	if !ok {
		return FileResult{}, fmt.Errorf("search files: backend %s cannot", ix.Name())
	}
	sort, err := q.sortClauses()
	if err != nil {
		return FileResult{}, err
	}
	q.Snippets = min(max(q.Snippets, 0), MaxSnippets)
	_, named := SortOrders[cmp.Or(strings.TrimSpace(q.Sort), "relevance")]
	res, err := fs.searchFiles(ctx, q, sort, named)
	if err != nil {
		return FileResult{}, err
	}
	if res.Hits == nil {
		res.Hits = []FileHit{}
	}
	for i := range res.Hits {
		res.Hits[i].Doc = restoreFile(res.Hits[i].Doc)
		if res.Hits[i].Snippets == nil {
			res.Hits[i].Snippets = []Snippet{}
		}
	}
	if res.Facets == nil {
		res.Facets = map[string][]FacetCount{}
	}
	for _, f := range q.Facets {
		if res.Facets[f] == nil {
			res.Facets[f] = []FacetCount{}
		}
	}
	return res, nil
}

// facetCounts sorts counts by value into FacetCounts (most frequent first, then by value).
func facetCounts(m map[string]int64) []FacetCount {
	out := make([]FacetCount, 0, len(m))
	for v, n := range m {
		out = append(out, FacetCount{Value: v, Count: n})
	}
	slices.SortFunc(out, func(a, b FacetCount) int {
		if a.Count != b.Count {
			if a.Count > b.Count {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Value, b.Value)
	})
	return out
}

// facetValue writes a facet value the way both backends agree on: strings in lower case,
// numbers in shortest decimal.
func facetValue(v any) string {
	switch x := v.(type) {
	case string:
		return normalizeString(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// locationKeys are the chunk fields a snippet's location keeps.
var locationKeys = []string{"page", "sheet", "slide", "chapter", "time_offset", "time_length", "segment"}

// snippetOf builds the snippet of one chunk document for the query words.
func snippetOf(chunk json.RawMessage, words []string, prefixLast bool) (Snippet, bool) {
	var c map[string]json.RawMessage
	if json.Unmarshal(chunk, &c) != nil {
		return Snippet{}, false
	}
	var module, text string
	_ = json.Unmarshal(c["module"], &module)
	_ = json.Unmarshal(c["text"], &text)
	loc := map[string]json.RawMessage{}
	for _, k := range locationKeys {
		if v, ok := c[k]; ok && string(v) != "null" {
			loc[k] = v
		}
	}
	parts := highlight(text, words, prefixLast, snippetWords)
	if len(parts) == 0 {
		return Snippet{}, false
	}
	return Snippet{Module: module, Location: loc, Parts: parts}, true
}

// WithFileDocuments wraps ix so that documents written to its files collection go through
// PrepareFile (archiveRel as there) and its hits come back in the metadata document's shape.
func WithFileDocuments(ix Index, archiveRel string) Index {
	return preparedIndex{Index: ix, archiveRel: archiveRel}
}

type preparedIndex struct {
	Index
	archiveRel string
}

// backend returns the index ix wraps when it is a preparedIndex, else ix.
func backend(ix Index) Index {
	if p, ok := ix.(preparedIndex); ok {
		return p.Index
	}
	return ix
}

func (p preparedIndex) Files() Collection {
	return preparedFiles{Collection: p.Index.Files(), archiveRel: p.archiveRel}
}

func (p preparedIndex) searchFiles(ctx context.Context, q FileQuery, sort []string, named bool) (FileResult, error) {
	fs, ok := p.Index.(fileSearcher)
	if !ok {
		return FileResult{}, fmt.Errorf("search files: backend %s cannot", p.Name())
	}
	return fs.searchFiles(ctx, q, sort, named)
}

type preparedFiles struct {
	Collection
	archiveRel string
}

// Upsert prepares each document; one that cannot be prepared is passed on as is, for the
// backend's validation to name. A large batch is prepared on every core (inParallel).
func (f preparedFiles) Upsert(ctx context.Context, docs []json.RawMessage) error {
	u, err := f.PrepareUpsert(docs)
	if err != nil {
		return err
	}
	return u.Write(ctx)
}

// PrepareUpsert does Upsert's preparation, and the backend's (PrepareUpsert).
func (f preparedFiles) PrepareUpsert(docs []json.RawMessage) (PreparedUpsert, error) {
	prepared, canonical := f.prepareFiles(docs)
	if c, ok := f.Collection.(canonicalPreparer); ok {
		return c.prepareCanonical(prepared, canonical)
	}
	return PrepareUpsert(f.Collection, prepared)
}

// canonicalPreparer is a collection that can be told which documents of an upsert are
// json.Marshal's output, PrepareFile's, which it then neither checks nor compacts again: a
// pass over each document's bytes fewer (the embedded backend).
type canonicalPreparer interface {
	prepareCanonical(docs []json.RawMessage, canonical []bool) (PreparedUpsert, error)
}

// prepareFiles runs PrepareFile over docs; canonical marks those it prepared.
func (f preparedFiles) prepareFiles(docs []json.RawMessage) (out []json.RawMessage, canonical []bool) {
	out, canonical = make([]json.RawMessage, len(docs)), make([]bool, len(docs))
	inParallel(len(docs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p, err := PrepareFile(docs[i], f.archiveRel)
			if err != nil {
				p = docs[i]
			}
			out[i], canonical[i] = p, err == nil
		}
	})
	return out, canonical
}

func (f preparedFiles) Search(ctx context.Context, q Query) (Result, error) {
	res, err := f.Collection.Search(ctx, q)
	for i := range res.Hits {
		res.Hits[i] = restoreFile(res.Hits[i])
	}
	return res, err
}

// IndexSearcher runs SearchFiles on an index, counting Facets for "all facets".
type IndexSearcher struct {
	Index  Index
	Facets []string
	// Drives, when set, gives the archive drives' presence now (the catalog's drive
	// registry): the drive facet's values then say whether each drive is online.
	Drives func(ctx context.Context) (map[string]bool, error)
}

// SearchFiles runs q.
func (s IndexSearcher) SearchFiles(ctx context.Context, q FileQuery) (FileResult, error) {
	res, err := SearchFiles(ctx, s.Index, q)
	if err != nil || s.Drives == nil || len(res.Facets[FieldDrive]) == 0 {
		return res, err
	}
	present, err := s.Drives(ctx)
	if err != nil {
		return FileResult{}, fmt.Errorf("search files: drives: %w", err)
	}
	MarkDrives(res.Facets[FieldDrive], present)
	return res, nil
}

// MarkDrives sets Online on drive facet values: the main tree (LocalDrive) is always online,
// an archive drive when present says so (a drive the registry does not know is offline, as
// /files/<id> treats it). Facet values are lower case; drive names are matched as such.
func MarkDrives(values []FacetCount, present map[string]bool) {
	online := map[string]bool{}
	for name, p := range present {
		online[normalizeString(name)] = online[normalizeString(name)] || p
	}
	for i := range values {
		on := values[i].Value == LocalDrive || online[values[i].Value]
		values[i].Online = &on
	}
}

// FacetAttributes returns s.Facets, or DefaultFacets when empty.
func (s IndexSearcher) FacetAttributes() []string {
	if len(s.Facets) == 0 {
		return DefaultFacets
	}
	return s.Facets
}

// isRelevance reports whether sort asks for relevance (the default).
func isRelevance(sort string) bool {
	return cmp.Or(strings.TrimSpace(sort), "relevance") == "relevance"
}

// relevance is what the relevance order ranks a file matching words by, the same on both
// backends: files whose own fields (name, path, type...) hold every word first; then files
// with more matching chunks of content (a document that is about the words mentions them in
// many places); then the newest (date); then id, so ties break identically everywhere.
type relevance struct {
	own    bool
	chunks int
	dated  bool
	date   float64
	id     string
}

// compare orders r before o (negative) when r is more relevant.
func (r relevance) compare(o relevance) int {
	first := func(a, b bool) int { // true before false
		if a == b {
			return 0
		}
		if a {
			return -1
		}
		return 1
	}
	return cmp.Or(first(r.own, o.own), cmp.Compare(o.chunks, r.chunks), first(r.dated, o.dated),
		cmp.Compare(o.date, r.date), strings.Compare(r.id, o.id))
}
