package search

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
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
//	"f:P"  flags: flagExists | flagNull | flagEmpty | flagMulti
//	"<:P"  ascending sort key (smallest number, else smallest string), sortable paths only
//	">:P"  descending sort key (largest number, else largest string), sortable paths only
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
}

type facetWalker struct {
	spec   facetSpec
	facets map[string]*facet
}

func (w *facetWalker) at(path string) *facet {
	f := w.facets[path]
	if f == nil {
		f = &facet{}
		w.facets[path] = f
	}
	return f
}

func (w *facetWalker) wanted(path string) bool {
	return covered(path, w.spec.filterable) || covered(path, w.spec.sortable)
}

func (w *facetWalker) descend(path string) bool {
	return w.wanted(path) || leadsTo(path, w.spec.filterable) || leadsTo(path, w.spec.sortable)
}

// object walks the members of an object found at prefix ("" for the document).
func (w *facetWalker) object(prefix string, obj map[string]any) {
	for k, v := range obj {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if !w.descend(path) {
			continue
		}
		w.member(path, v)
	}
}

// member records an object member's value: the value of a field, as opposed to an array
// element, which is the only place null and "" count as such.
func (w *facetWalker) member(path string, v any) {
	wanted := w.wanted(path)
	if wanted {
		f := w.at(path)
		f.flags |= flagExists
		switch x := v.(type) {
		case nil:
			f.flags |= flagNull
		case string:
			if x == "" {
				f.flags |= flagEmpty
			}
		case []any:
			if len(x) == 0 {
				f.flags |= flagEmpty
			}
		case map[string]any:
			if len(x) == 0 {
				f.flags |= flagEmpty
			}
		}
	}
	w.value(path, v, wanted)
}

// value records the scalar values under v (arrays flattened, objects descended into).
func (w *facetWalker) value(path string, v any, wanted bool) {
	switch x := v.(type) {
	case map[string]any:
		w.object(path, x)
	case []any:
		for _, e := range x {
			w.value(path, e, wanted)
		}
	case string:
		if s := normalizeString(x); wanted && s != "" {
			f := w.at(path)
			f.strs = append(f.strs, s)
		}
	case bool:
		if wanted {
			f := w.at(path)
			f.strs = append(f.strs, strconv.FormatBool(x))
		}
	case float64:
		if wanted {
			f := w.at(path)
			f.nums = append(f.nums, x)
		}
	}
}

// flatFacets builds the facet objects of a document decoded by encoding/json (numbers are
// float64), by owning attribute; attributes owning no key are absent.
func flatFacets(doc map[string]any, spec facetSpec) (map[string][]byte, error) {
	if spec.empty() {
		return nil, nil
	}
	w := &facetWalker{spec: spec, facets: map[string]*facet{}}
	w.object("", doc)
	declared := spec.declared()
	cols := map[string]map[string]any{}
	for path, f := range w.facets {
		a := owner(path, declared)
		out := cols[a]
		if out == nil {
			out = map[string]any{}
			cols[a] = out
		}
		// Sorted and deduplicated, so equal documents give equal bytes.
		slices.Sort(f.nums)
		slices.Sort(f.strs)
		f.nums, f.strs = slices.Compact(f.nums), slices.Compact(f.strs)
		vals := make([]any, 0, len(f.nums)+len(f.strs))
		for _, n := range f.nums {
			vals = append(vals, n)
		}
		for _, s := range f.strs {
			vals = append(vals, s)
		}
		flags := f.flags
		switch len(vals) {
		case 0:
		case 1:
			out["v:"+path] = vals[0]
		default:
			out["m:"+path] = vals
			flags |= flagMulti
		}
		if flags != 0 {
			out["f:"+path] = flags
		}
		if len(vals) > 0 && covered(path, spec.sortable) {
			lo, hi := sortKeys(f)
			out["<:"+path] = lo
			out[">:"+path] = hi
		}
	}
	enc := make(map[string][]byte, len(cols))
	for a, out := range cols {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false) // keep "<:" and ">:" keys readable
		if err := e.Encode(out); err != nil {
			return nil, err
		}
		enc[a] = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	}
	return enc, nil
}

// sortKeys returns a path's ascending and descending sort keys (its values are sorted): numbers come before strings
// in both directions (Meilisearch's order), so an array sorts by its smallest number (or
// string) ascending and its largest descending.
func sortKeys(f *facet) (lo, hi any) {
	if len(f.nums) > 0 {
		return f.nums[0], f.nums[len(f.nums)-1]
	}
	return f.strs[0], f.strs[len(f.strs)-1]
}

// searchText returns the text the full-text index holds for a document: every string, number
// and boolean in it, recursively (object keys and FieldPathsExact excluded), one per line.
func searchText(doc map[string]any) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
		case float64:
			b.WriteString(strconv.FormatFloat(x, 'f', -1, 64))
			b.WriteByte('\n')
		case bool:
			b.WriteString(strconv.FormatBool(x))
			b.WriteByte('\n')
		}
	}
	for k, v := range doc {
		if k != FieldPathsExact {
			walk(v)
		}
	}
	return b.String()
}

func (s Settings) spec() facetSpec {
	f := facetSpec{filterable: s.Filterable, sortable: s.Sortable}
	f.decl = f.declared()
	return f
}
