package search

import (
	"strings"

	"github.com/homeindex/homeindex/internal/jsonvalid"
)

// prepareRaw makes the upsertDoc of a document in json.Marshal's form (PrepareFile's output)
// straight from its bytes: one walk records its facets and writes its text, where the
// general path (parseDoc, flatFacetsKeyed, searchText) decodes it into a map first and walks
// that map twice. Every synced file and every module hop is prepared here; the map, its
// boxed values and the second walk were most of the preparation, a quarter of a first
// sync's instructions.
//
// The results are the general path's, byte for byte (TestPrepareRawMatchesDecoded): the
// stored facet columns are compared with a later write's to tell which columns it changes.
// ok is false for a document the general path must see: one indexForm would rewrite (names
// that are not UTF-8), one whose id is missing or invalid, or a number float64 cannot hold;
// that path then says what is wrong. The document has no parsed value (value is nil).
func prepareRaw(raw []byte, spec facetSpec, keyed []string) (d upsertDoc, ok bool) {
	if needsDisplay(raw) {
		return d, false
	}
	w := rawWalker{d: valueDecoder{data: raw, text: string(raw)}}
	w.d.space()
	if w.d.pos >= len(raw) || w.d.peek() != '{' {
		return d, false
	}
	if !spec.empty() {
		w.facets = walkers.Get().(*facetWalker)
		defer w.facets.release()
		w.facets.spec = spec
	}
	w.text.init()
	var ms [28]rawMember
	w.ms = ms[:0]
	if w.object("", w.facets != nil, true, true) != nil || !ValidateID(w.id) {
		return d, false
	}
	d.id, d.raw = strings.Clone(w.id), raw
	var keys []any
	if w.facets != nil {
		d.facets, keys = w.facets.objects(keyed)
	}
	var err error
	if d.blobs, err = facetBlobs(d.facets, spec.declared()); err != nil {
		return upsertDoc{}, false
	}
	d.blobs = append(d.blobs, keys...)
	d.text = w.text.b.String()
	d.hash = textHash(d.text)
	return d, true
}

// rawWalker walks a document's JSON (valid: json.Marshal's) in the order searchText walks
// its map: the members of each object sorted by key, the last of a key given twice.
type rawWalker struct {
	d      valueDecoder
	facets *facetWalker // nil: no attribute is declared
	text   textWriter
	ms     []rawMember // the members of the objects being walked, as a stack
	id     string      // the document's id ("" when it has none)
}

// rawMember is an object member: its key and where its value starts.
type rawMember struct {
	key string
	at  int
}

// object walks the object at the decoder's position, found at path prefix; top: it is the
// document. facets: its members' paths are the spec's business (flatFacets' walk reaches
// them; never without a facet walker); text: their values go into the text.
func (w *rawWalker) object(prefix string, facets, text, top bool) error {
	d := &w.d
	d.pos++ // {
	start := len(w.ms)
	for {
		d.space()
		if d.peek() == '}' {
			d.pos++
			break
		}
		k, err := d.str()
		if err != nil {
			return err
		}
		d.space()
		d.pos++ // :
		d.space()
		w.ms = append(w.ms, rawMember{k, d.pos})
		d.pos = jsonvalid.SkipValue(d.data, d.pos)
		d.space()
		if d.peek() == ',' {
			d.pos++
		}
	}
	end := d.pos
	for _, m := range keyOrder(w.ms[start:], func(m rawMember) string { return m.key }) {
		inText := text && (!top || inText(m.key))
		var path string
		var r pathRole
		on := false
		if facets {
			path = m.key
			if prefix != "" {
				path = prefix + "." + m.key
			}
			r = w.facets.spec.role(path)
			on = r.descend
		}
		d.pos = m.at
		if top && m.key == "id" {
			if d.peek() != '"' {
				return errNotJSONObject // not a string id: parseDoc names the problem
			}
			id, err := d.str()
			if err != nil {
				return err
			}
			w.id = id
			d.pos = m.at
		}
		if !on && !inText {
			continue
		}
		if err := w.value(path, r, on, inText, true); err != nil {
			return err
		}
	}
	w.ms = w.ms[:start]
	d.pos = end
	return nil
}

// value walks the value at the decoder's position, at path with role r; on: its facets are
// recorded (r.descend); member: it is an object member's value, not an array element.
func (w *rawWalker) value(path string, r pathRole, on, text, member bool) error {
	d := &w.d
	occurs := on && member && r.wanted
	switch d.peek() {
	case '"':
		s, err := d.str()
		if err != nil {
			return err
		}
		if occurs {
			w.facets.occurs(path, r, emptyFlag(s == ""))
		}
		if on {
			w.facets.addString(path, r, s)
		}
		if text {
			w.text.str(s)
		}
	case '{':
		if occurs {
			w.facets.occurs(path, r, emptyFlag(w.emptyContainer()))
		}
		return w.object(path, on, text, false)
	case '[':
		if occurs {
			w.facets.occurs(path, r, emptyFlag(w.emptyContainer()))
		}
		d.pos++
		for {
			d.space()
			if d.peek() == ']' {
				d.pos++
				return nil
			}
			if err := w.value(path, r, on, text, false); err != nil {
				return err
			}
			d.space()
			if d.peek() == ',' {
				d.pos++
			}
		}
	case 't', 'f':
		x := d.peek() == 't'
		d.pos = jsonvalid.SkipValue(d.data, d.pos)
		if occurs {
			w.facets.occurs(path, r, 0)
		}
		if on {
			w.facets.addBool(path, r, x)
		}
	case 'n':
		d.pos += 4
		if occurs {
			w.facets.occurs(path, r, flagNull)
		}
	default:
		x, err := d.float()
		if err != nil {
			return err
		}
		if occurs {
			w.facets.occurs(path, r, 0)
		}
		if on {
			w.facets.addNumber(path, r, x)
		}
		if text {
			w.text.num(x)
		}
	}
	return nil
}

// emptyContainer reports whether the object or array at the decoder's position is empty.
func (w *rawWalker) emptyContainer() bool {
	d := w.d
	d.pos++
	d.space()
	c := d.peek()
	return c == '}' || c == ']'
}
