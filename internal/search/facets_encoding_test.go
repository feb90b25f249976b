package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// flatFacetsViaEncodingJSON is flatFacets as first written: each column a map encoded by
// encoding/json (less the flags key when it says only that the one value exists, and the sort
// keys of a single value). flatFacets writes the objects by hand and must give the same bytes
// (the stored columns are compared with them to find what a write changes).
func flatFacetsViaEncodingJSON(doc map[string]any, spec facetSpec) (map[string][]byte, error) {
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
		if flags != 0 && (flags != flagExists || len(vals) != 1) {
			out["f:"+path] = flags
		}
		if len(vals) > 1 && covered(path, spec.sortable) {
			lo, hi := sortKeys(f)
			out["<:"+path] = lo
			out[">:"+path] = hi
		}
	}
	enc := make(map[string][]byte, len(cols))
	for a, out := range cols {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if err := e.Encode(out); err != nil {
			return nil, err
		}
		enc[a] = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	}
	return enc, nil
}

// TestFlatFacetsMatchEncodingJSON compares flatFacets with encoding/json's rendering over
// random documents: awkward strings (quotes, control characters, U+2028, HTML characters,
// multi-byte text, bytes that are not UTF-8), numbers at the format's cutoffs, nested
// objects and arrays, keys containing dots.
func TestFlatFacetsMatchEncodingJSON(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	strs := []string{"", " ", "plain", "Mixed Case", `q"uote`, `back\\slash`, "tab\there", "nl\nx", "\x01\x1f\x7f",
		"<a&b>", "line\u2028sep\u2029", "é日本語🙂", "bad\xffutf8", "  padded  ", "\b\f\r"}
	nums := []float64{0, 1, -1, 2.5, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, -1e21, 123456789012345, 0.1, 1795745275.9935, -0.5}
	keys := []string{"a", "b", "a.b", "c", "x y", `k"q`, "ü", "arr", "n"}
	var value func(depth int) any
	value = func(depth int) any {
		switch k := r.IntN(8); {
		case k == 0:
			return nil
		case k == 1:
			return r.IntN(2) == 0
		case k == 2 || k == 3:
			return strs[r.IntN(len(strs))]
		case k == 4:
			return nums[r.IntN(len(nums))]
		case depth > 3:
			return "leaf"
		case k == 5 || k == 6:
			arr := make([]any, r.IntN(4))
			for i := range arr {
				arr[i] = value(depth + 1)
			}
			return arr
		default:
			obj := map[string]any{}
			for range r.IntN(4) {
				obj[keys[r.IntN(len(keys))]] = value(depth + 1)
			}
			return obj
		}
	}
	spec := facetSpec{filterable: []string{"a", "a.b", "c", "arr", "n", "x y"}, sortable: []string{"arr", "n", "c"}}
	spec.decl = spec.declared()
	for i := range 3000 {
		doc := map[string]any{}
		for range 1 + r.IntN(6) {
			doc[keys[r.IntN(len(keys))]] = value(0)
		}
		// Through encoding/json, as documents reach flatFacets (bad UTF-8 becomes U+FFFD).
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var decoded map[string]any
		if err := json.Unmarshal(raw, &decoded); err != nil {
			t.Fatal(err)
		}
		want, err := flatFacetsViaEncodingJSON(decoded, spec)
		if err != nil {
			t.Fatal(err)
		}
		got := flatFacets(decoded, spec)
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("document %d %s:\nflatFacets %q\nencoding/json %q", i, raw, got, want)
		}
	}
}

// marshalObject gives json.Marshal's bytes for objects of raw values as PrepareFile has them.
func TestMarshalObjectMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		`{}`,
		`{"b":1,"a":"x","c":[1,2,{"z":null}],"d":{"y":true}}`,
		"{ \"spaced\" : [ 1 , 2 ] ,\n\t\"s\": \"a b\\tc\" }",
		`{"html":"<a href='x'>&amp;</a>","k<>&":"v","sep":"\u2028\u2029 and \\u2028"}`,
		`{"é":"日本","q\"uote":"back\\slash","ctl":"\u0001\n","bad":"\ud800x"}`,
		`{"n":1e21,"m":-0.000001,"neg":-0,"big":123456789012345678901234567890}`,
	} {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(raw), &doc); err != nil {
			t.Fatal(err)
		}
		doc["derived"] = mustJSON("<x> & \u2028")
		want, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var ms members
		for k, v := range doc {
			ms = append(ms, member{k, v})
		}
		if got := marshalObject(ms.sorted()); !bytes.Equal(got, want) {
			t.Errorf("marshalObject(%s) =\n%s\nwant\n%s", raw, got, want)
		}
	}
}

// sortKeys is the reference's sort keys of a path's sorted values, for encoding/json: the
// smallest and largest number, else string (numbers come before strings in both directions).
func sortKeys(f *facet) (lo, hi any) {
	if len(f.nums) > 0 {
		return f.nums[0], f.nums[len(f.nums)-1]
	}
	return f.strs[0], f.strs[len(f.strs)-1]
}
