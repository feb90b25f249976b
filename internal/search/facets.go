package search

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/homeindex/homeindex/protocol"
)

// The embedded backend keeps, beside each document, small JSON objects holding what
// Meilisearch would put in its facet databases for the filterable and sortable attributes:
// every value reached by a dotted path (through nested objects, arrays, and keys that contain
// dots), normalized for comparison. Filters and sorts read only these objects, so their
// semantics are written once, here, in Go.
//
// Each declared attribute has a column of its own (facetColumn) holding the keys of the paths
// it owns (owner: the longest declared attribute covering the path). A document update then
// rewrites, and re-indexes, only the columns whose content changed: a merge that moves
// "next" touches next's two expression indexes, not all of them.
//
// Keys of a column's object, for a path P it owns:
//
//	"v:P"  the value when P has exactly one (number, or normalized string; booleans are the
//	       strings "true"/"false"; null and "" are not values)
//	"m:P"  the array of values when P has two or more
//	"f:P"  flags: flagExists | flagNull | flagEmpty | flagMulti; left out when they are
//	       flagExists alone and P has one value, which "v:P" says already (see sqlWhere.cond)
//	"<:P"  ascending sort key (smallest number, else smallest string), sortable paths with
//	       two or more values only: a single value is its own sort key (sortKeyOf)
//	">:P"  descending sort key (largest number, else largest string), likewise
const (
	flagExists = 1 // P occurs as an object member (whatever its value, null included)
	flagNull   = 2 // some occurrence of P is null (not an array element)
	flagEmpty  = 4 // some occurrence of P is "", [] or {} (not an array element)
	flagMulti  = 8 // P has two or more values ("m:P" is set)
)

// facetSpec is the set of attributes covered by a collection's settings.
type facetSpec struct {
	filterable, sortable []string
	decl                 []string // declared(), when computed ahead
	// roles memoizes role by path (Settings.spec makes one per write, shared by the
	// goroutines preparing its documents): a batch's documents mostly share their paths, and
	// each path's role takes a pass over every attribute.
	roles *sync.Map
}

// pathRole is what a spec makes of one dotted path.
type pathRole struct {
	wanted   bool   // covered by a filterable or sortable attribute: its values are recorded
	descend  bool   // wanted, or some attribute lies below it: the walk goes into its value
	sortable bool   // covered by a sortable attribute: it has sort keys
	owner    string // the declared attribute whose column holds its keys
	column   int    // owner's place among the declared attributes, which are sorted
}

func (s facetSpec) role(path string) pathRole {
	if s.roles != nil {
		if r, ok := s.roles.Load(path); ok {
			return r.(pathRole)
		}
	}
	r := pathRole{sortable: covered(path, s.sortable)}
	r.wanted = r.sortable || covered(path, s.filterable)
	r.descend = r.wanted || leadsTo(path, s.filterable) || leadsTo(path, s.sortable)
	if r.wanted {
		r.owner = owner(path, s.declared())
		r.column, _ = slices.BinarySearch(s.declared(), r.owner)
	}
	if s.roles != nil {
		s.roles.Store(path, r)
	}
	return r
}

// covered reports whether path is attr or nested under one of attrs.
func covered(path string, attrs []string) bool {
	for _, a := range attrs {
		if covers(a, path) {
			return true
		}
	}
	return false
}

// covers reports whether path is attr a or nested under it.
func covers(a, path string) bool {
	return path == a || strings.HasPrefix(path, a) && len(path) > len(a) && path[len(a)] == '.'
}

// leadsTo reports whether some attribute lies under path (so the walk must descend).
func leadsTo(path string, attrs []string) bool {
	for _, a := range attrs {
		if strings.HasPrefix(a, path) && len(a) > len(path) && a[len(path)] == '.' {
			return true
		}
	}
	return false
}

func (s facetSpec) empty() bool { return len(s.filterable) == 0 && len(s.sortable) == 0 }

// declared returns the attributes the spec covers, sorted and without duplicates: one facet
// column each. Settings.spec computes it once; flatFacets runs per document.
func (s facetSpec) declared() []string {
	if s.decl != nil {
		return s.decl
	}
	out := append(append([]string{}, s.filterable...), s.sortable...)
	slices.Sort(out)
	return slices.Compact(out)
}

// owner returns the declared attribute whose column holds path's keys: the longest one that
// covers path, "" when none does.
func owner(path string, declared []string) string {
	best := ""
	for _, a := range declared {
		if len(a) > len(best) && covers(a, path) {
			best = a
		}
	}
	return best
}

// facetColumn is the quoted name of an attribute's facet column. Attribute names are
// [A-Za-z0-9_.-] (attrRE), so they need no escaping inside the quotes.
func facetColumn(attr string) string { return `"f:` + attr + `"` }

type facet struct {
	nums  []float64
	strs  []string
	flags int
	// The role of its path (facetSpec.role), set when the walk first records it: writing
	// the objects then looks up neither the facet nor the role again.
	owner    string
	column   int
	sortable bool
}

type facetWalker struct {
	spec   facetSpec
	facets map[string]*facet
	spare  []*facet    // emptied facets of earlier documents, for at
	paths  []ownedPath // the facets, as at made them
	buf    []byte      // the facet objects being written
	owners []string    // the columns written to buf, in order
	ends   []int       // where each of them ends in buf
}

// ownedPath is a facet's path with the attribute whose column holds it.
type ownedPath struct {
	owner, path string
	f           *facet
}

// walkers keep flatFacets' scratch between documents: every module hop and every synced file
// flattens a document, and building the walker afresh each time was a quarter of a first sync's
// allocations, and so of its garbage collections.
var walkers = sync.Pool{New: func() any { return &facetWalker{facets: make(map[string]*facet, 16)} }}

// at returns path's facet, made with its role r on the path's first value.
func (w *facetWalker) at(path string, r pathRole) *facet {
	f := w.facets[path]
	if f == nil {
		if n := len(w.spare); n > 0 {
			f, w.spare = w.spare[n-1], w.spare[:n-1]
		} else {
			f = &facet{}
		}
		f.owner, f.column, f.sortable = r.owner, r.column, r.sortable
		w.facets[path] = f
		w.paths = append(w.paths, ownedPath{r.owner, path, f})
	}
	return f
}

// release empties the walker, keeping its storage, and returns it to walkers. Its strings
// are cleared so a pooled walker does not keep a document alive.
func (w *facetWalker) release() {
	for _, f := range w.facets {
		clear(f.strs)
		f.nums, f.strs, f.flags, f.owner = f.nums[:0], f.strs[:0], 0, ""
		w.spare = append(w.spare, f)
	}
	clear(w.facets)
	clear(w.paths)
	clear(w.owners)
	w.paths, w.buf, w.owners, w.ends, w.spec = w.paths[:0], w.buf[:0], w.owners[:0], w.ends[:0], facetSpec{}
	walkers.Put(w)
}

// object walks the members of an object found at prefix ("" for the document).
func (w *facetWalker) object(prefix string, obj map[string]any) {
	for k, v := range obj {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		r := w.spec.role(path)
		if !r.descend {
			continue
		}
		w.member(path, v, r)
	}
}

// member records an object member's value: the value of a field, as opposed to an array
// element, which is the only place null and "" count as such.
func (w *facetWalker) member(path string, v any, r pathRole) {
	if r.wanted {
		switch x := v.(type) {
		case nil:
			w.occurs(path, r, flagNull)
		case string:
			w.occurs(path, r, emptyFlag(x == ""))
		case []any:
			w.occurs(path, r, emptyFlag(len(x) == 0))
		case map[string]any:
			w.occurs(path, r, emptyFlag(len(x) == 0))
		default:
			w.occurs(path, r, 0)
		}
	}
	w.value(path, v, r)
}

// value records the scalar values under v (arrays flattened, objects descended into).
func (w *facetWalker) value(path string, v any, r pathRole) {
	switch x := v.(type) {
	case map[string]any:
		w.object(path, x)
	case []any:
		for _, e := range x {
			w.value(path, e, r)
		}
	case string:
		w.addString(path, r, x)
	case bool:
		w.addBool(path, r, x)
	case float64:
		w.addNumber(path, r, x)
	}
}

// The walks over a document (the decoded one above, the raw one of documents_raw.go) record
// what they meet through these: occurs for an object member of a wanted path (flags beside
// flagExists), the add methods for each scalar value.

func (w *facetWalker) occurs(path string, r pathRole, flags int) {
	w.at(path, r).flags |= flagExists | flags
}

func emptyFlag(empty bool) int {
	if empty {
		return flagEmpty
	}
	return 0
}

func (w *facetWalker) addString(path string, r pathRole, x string) {
	if s := normalizeString(x); r.wanted && s != "" {
		f := w.at(path, r)
		f.strs = append(f.strs, s)
	}
}

func (w *facetWalker) addBool(path string, r pathRole, x bool) {
	if r.wanted {
		f := w.at(path, r)
		f.strs = append(f.strs, strconv.FormatBool(x))
	}
}

func (w *facetWalker) addNumber(path string, r pathRole, x float64) {
	if r.wanted {
		f := w.at(path, r)
		f.nums = append(f.nums, x)
	}
}

// flatFacets builds the facet objects of a document decoded by encoding/json (numbers are
// float64), by owning attribute; attributes owning no key are absent.
//
// The objects are written by hand, byte for byte what encoding/json gives for the same map
// with SetEscapeHTML(false) (keys sorted, numbers in its format): every module hop upserts the
// document, so this runs once per hop, where encoding/json's reflection over a map per column
// was a fifth of the index write. The stored column is compared with these bytes to tell
// which columns a write changes, so the form must stay stable.
func flatFacets(doc map[string]any, spec facetSpec) map[string][]byte {
	facets, _ := flatFacetsKeyed(doc, spec, nil)
	return facets
}

// flatFacetsKeyed is flatFacets that also returns the sort keys of the keyed attributes
// (sortable, declared; see sortkeys.go): two per attribute, ready to bind.
func flatFacetsKeyed(doc map[string]any, spec facetSpec, keyed []string) (map[string][]byte, []any) {
	if spec.empty() {
		return nil, nil
	}
	w := walkers.Get().(*facetWalker)
	defer w.release()
	w.spec = spec
	w.object("", doc)
	return w.objects(keyed)
}

// objects writes the facet objects of what the walker recorded, by owning attribute, and
// returns them with the sort keys of keyed (flatFacetsKeyed).
func (w *facetWalker) objects(keyed []string) (map[string][]byte, []any) {
	// Each path under its owning column, sorted by column then path: a column's keys are
	// "<kind>:<path>", so sorting them is sorting by kind (facetKinds is in byte order) and
	// then by path.
	paths := w.paths // in the order at made them
	for _, p := range paths {
		f := p.f
		slices.Sort(f.nums)
		slices.Sort(f.strs)
		f.nums, f.strs = slices.Compact(f.nums), slices.Compact(f.strs)
	}
	// By column (the declared attributes are sorted, so its place orders the owners as their
	// names do), then path: nearly every column holds one path, so most comparisons are of two
	// numbers. A walk in key order (prepareRaw's) made them in this order already, when each
	// path is its own column.
	byColumn := func(a, b ownedPath) int {
		return cmp.Or(cmp.Compare(a.f.column, b.f.column), strings.Compare(a.path, b.path))
	}
	if !slices.IsSortedFunc(paths, byColumn) {
		slices.SortFunc(paths, byColumn)
	}
	// The objects are written one after the other into the walker's buffer, then copied out
	// at once; ends[i] is where the i-th column's object ends.
	buf, owners, ends := w.buf, w.owners, w.ends
	for lo := 0; lo < len(paths); {
		hi := lo + 1
		for hi < len(paths) && paths[hi].owner == paths[lo].owner {
			hi++
		}
		start := len(buf)
		buf = append(buf, '{')
		for k := range len(facetKinds) {
			for _, p := range paths[lo:hi] {
				buf = appendFacetKey(buf, facetKinds[k], p, len(buf) > start+1)
			}
		}
		if len(buf) == start+1 {
			buf = buf[:start] // no key: the column is absent
		} else {
			buf = append(buf, '}')
			owners, ends = append(owners, paths[lo].owner), append(ends, len(buf))
		}
		lo = hi
	}
	w.buf, w.owners, w.ends = buf, owners, ends
	keys := w.sortKeyValues(keyed)
	if len(owners) == 0 {
		return map[string][]byte{}, keys
	}
	out := slices.Clone(buf)
	enc := make(map[string][]byte, len(owners))
	start := 0
	for i, o := range owners {
		enc[o] = out[start:ends[i]:ends[i]]
		start = ends[i]
	}
	return enc, keys
}

// facetKinds are the key kinds of a facet object, in byte order.
const facetKinds = "<>fmv"

// appendFacetKey appends a path's key of one kind ("kind:path": value), preceded by a comma
// when comma is set, if the path has that key.
func appendFacetKey(b []byte, kind byte, p ownedPath, comma bool) []byte {
	f, path := p.f, p.path
	n := len(f.nums) + len(f.strs)
	flags := f.flags
	if n > 1 {
		flags |= flagMulti
	}
	switch {
	case kind == 'f' && flags != 0 && !(flags == flagExists && n == 1),
		kind == 'v' && n == 1,
		kind == 'm' && n > 1,
		(kind == '<' || kind == '>') && n > 1 && f.sortable:
	default:
		return b
	}
	if comma {
		b = append(b, ',')
	}
	// The key is "kind:path" quoted. The path was decoded by encoding/json, so it is valid
	// UTF-8, which AppendName escapes as encoding/json does; kind and ':' need no escaping.
	at := len(b)
	b = protocol.AppendName(b, path)
	b = append(b, 0, 0)
	copy(b[at+3:], b[at+1:len(b)-2])
	b[at+1], b[at+2] = kind, ':'
	b = append(b, ':')
	switch kind {
	case 'f':
		return strconv.AppendInt(b, int64(flags), 10)
	case 'v':
		if len(f.nums) == 1 {
			return protocol.AppendJSONNumber(b, f.nums[0])
		}
		return protocol.AppendName(b, f.strs[0])
	case 'm':
		b = append(b, '[')
		for i, x := range f.nums {
			if i > 0 {
				b = append(b, ',')
			}
			b = protocol.AppendJSONNumber(b, x)
		}
		for i, s := range f.strs {
			if i > 0 || len(f.nums) > 0 {
				b = append(b, ',')
			}
			b = protocol.AppendName(b, s)
		}
		return append(b, ']')
	}
	num, str, isNum := facetSortKey(f, kind == '>')
	if isNum {
		return protocol.AppendJSONNumber(b, num)
	}
	return protocol.AppendName(b, str)
}

// facetSortKey returns a path's ascending or descending sort key (f has values, sorted): a
// number if it has any, as numbers come before strings in both directions (Meilisearch's
// order), so an array sorts by its smallest number (or string) ascending and its largest
// descending.
func facetSortKey(f *facet, desc bool) (num float64, str string, isNum bool) {
	if n := len(f.nums); n > 0 {
		if desc {
			return f.nums[n-1], "", true
		}
		return f.nums[0], "", true
	}
	if desc {
		return 0, f.strs[len(f.strs)-1], false
	}
	return 0, f.strs[0], false
}

// searchText returns the text the full-text index holds for a document: every string and
// number in it, recursively, one per line, objects in key order (so equal documents give equal
// text, and textHash can tell an unchanged text). Left out: object keys, FieldPathsExact (the
// paths' bytes), the top-level protocol.FieldNext (a module name: the chain's bookkeeping,
// which would make a search for "text" or "ocr" find every file waiting for that module) and
// booleans (a search for "true" means nothing). So a module hop that adds no words leaves
// the text as it was.
//
// A value the text holds already, or holds in other case, is left out: a file's sort name is
// its name in lower case, and its path and modification time are both in paths_list and
// path_entries. A search matches the same documents with or without the repeats (their words
// are there either way: the index folds case), and the full-text index, whose work grows with
// the words it is given, takes a third fewer of them for a typical file.
func searchText(doc map[string]any) string {
	var t textWriter
	t.init()
	// The keys of the objects being walked, sorted, as a stack: one slice for the document.
	keys := make([]string, 0, 2*len(doc))
	sortedKeys := func(m map[string]any) []string {
		start := len(keys)
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys[start:])
		return keys[start:]
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			start := len(keys)
			for _, k := range sortedKeys(x) {
				walk(x[k])
			}
			keys = keys[:start]
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			t.str(x)
		case float64:
			t.num(x)
		}
	}
	for _, k := range sortedKeys(doc) {
		if inText(k) {
			walk(doc[k])
		}
	}
	return t.b.String()
}

// inText reports whether the text holds the value of the document's top-level member k.
func inText(k string) bool { return k != FieldPathsExact && k != protocol.FieldNext }

// textWriter writes searchText's text from the values of a walk in its order. It must not be
// copied once init has run (its list is its own array).
type textWriter struct {
	b    strings.Builder
	seen textSeen
}

func (t *textWriter) init() {
	t.b.Grow(textGrow)
	t.seen.list = t.seen.inline[:0]
}

func (t *textWriter) str(x string) {
	if t.seen.add(x) {
		t.b.WriteString(x)
		t.b.WriteByte('\n')
		// The same in lower case has the same words for the index, which folds case: a
		// name's sort name is left out with it. Only a name's length is folded, not a
		// chunk's text.
		if len(x) <= textFoldMax {
			if lower := strings.ToLower(x); lower != x {
				t.seen.add(lower)
			}
		}
	}
}

func (t *textWriter) num(x float64) {
	if n := strconv.FormatFloat(x, 'f', -1, 64); t.seen.add(n) {
		t.b.WriteString(n)
		t.b.WriteByte('\n')
	}
}

// textSeen is the set of values searchText has written: a list while it is short (a file's
// document has a dozen or two), a map beyond.
type textSeen struct {
	list   []string
	set    map[string]struct{}
	inline [textSeenList]string // list's first storage: a document's values, no allocation
}

// textGrow is what searchText's builder holds from the start: a file's text (its names, path,
// type and numbers) fits, where growing from nothing took four allocations.
const textGrow = 256

// textSeenList is how many values textSeen keeps in its list.
const textSeenList = 32

// textFoldMax is the longest value searchText also records in lower case: a file name's
// longest (NAME_MAX), so that a name's sort name is found, where a chunk's text is not copied.
const textFoldMax = 255

// add adds v and reports whether it was new.
func (t *textSeen) add(v string) bool {
	if t.set != nil {
		if _, ok := t.set[v]; ok {
			return false
		}
		t.set[v] = struct{}{}
		return true
	}
	if slices.Contains(t.list, v) {
		return false
	}
	if len(t.list) < textSeenList {
		t.list = append(t.list, v)
		return true
	}
	t.set = make(map[string]struct{}, 2*textSeenList)
	for _, s := range t.list {
		t.set[s] = struct{}{}
	}
	t.set[v] = struct{}{}
	t.list = nil
	return true
}

// textHash is what the documents table keeps of a document's searchText, to tell whether an
// update must rewrite its full-text row.
func textHash(text string) int64 {
	return int64(xxhash.Sum64String(text))
}

func (s Settings) spec() facetSpec {
	f := facetSpec{filterable: s.Filterable, sortable: s.Sortable, roles: new(sync.Map)}
	f.decl = f.declared()
	return f
}
