package search

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/homeindex/homeindex/internal/jsonvalid"
)

// decodeObject decodes a JSON object into the map encoding/json would give for it (numbers as
// float64, the last of duplicate keys kept), into dst. Every index write decodes its
// documents, and encoding/json's reflection was a third of that; this decodes valid JSON
// (jsonvalid.Valid checks it first, without allocating) by hand, and gives the rare string with
// escapes or bytes that are not UTF-8 to encoding/json, which rewrites them as it always has.
// A document that is not a JSON object is an error; null leaves dst nil. canonical says data
// is json.Marshal's output (PrepareFile's, see canonicalPreparer): valid, so not checked again.
//
// The document is copied into one string, and its plain strings and keys are slices of it:
// one allocation where a string each was 17 of the 43 a typical file's document cost. A value
// kept after the write (a document's id in the file table) must be cloned, or it keeps the
// whole document's text alive.
func decodeObject(data []byte, dst *map[string]any, canonical bool) error {
	if !canonical && !jsonvalid.Valid(data) {
		return json.Unmarshal(data, dst) // says what is wrong
	}
	d := valueDecoder{data: data, text: string(data)}
	d.space()
	if d.peek() == 'n' {
		*dst = nil
		return nil
	}
	if d.peek() != '{' {
		return errNotJSONObject
	}
	if *dst == nil {
		*dst = map[string]any{}
	}
	return d.object(*dst)
}

var errNotJSONObject = errors.New("not a JSON object")

// valueDecoder reads valid JSON (jsonvalid.Valid said so): it checks nothing encoding/json's
// scanner already did, and the nesting jsonvalid.Valid allows (encoding/json's limit) bounds its
// recursion.
type valueDecoder struct {
	data []byte
	text string // data as a string: plain strings and numbers are read as slices of it
	pos  int
}

func (d *valueDecoder) peek() byte { return d.data[d.pos] }

func (d *valueDecoder) space() { d.pos = jsonvalid.SkipSpace(d.data, d.pos) }

func (d *valueDecoder) value() (any, error) {
	d.space()
	switch c := d.peek(); c {
	case '{':
		m := map[string]any{}
		return m, d.object(m)
	case '[':
		return d.array()
	case '"':
		return d.str()
	case 't':
		d.pos += 4
		return true, nil
	case 'f':
		d.pos += 5
		return false, nil
	case 'n':
		d.pos += 4
		return nil, nil
	default:
		return d.number()
	}
}

// object reads the object at pos into m.
func (d *valueDecoder) object(m map[string]any) error {
	d.pos++ // {
	d.space()
	if d.peek() == '}' {
		d.pos++
		return nil
	}
	for {
		d.space()
		k, err := d.str()
		if err != nil {
			return err
		}
		d.space()
		d.pos++ // :
		v, err := d.value()
		if err != nil {
			return err
		}
		m[k] = v
		d.space()
		c := d.peek()
		d.pos++ // , or }
		if c == '}' {
			return nil
		}
	}
}

func (d *valueDecoder) array() ([]any, error) {
	d.pos++ // [
	d.space()
	out := []any{}
	if d.peek() == ']' {
		d.pos++
		return out, nil
	}
	for {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		d.space()
		c := d.peek()
		d.pos++ // , or ]
		if c == ']' {
			return out, nil
		}
	}
}

// str reads the string at pos. Plain UTF-8 without escapes is its own text; anything else
// is decoded as encoding/json would (jsonvalid.Unquote).
func (d *valueDecoder) str() (string, error) {
	start := d.pos
	// Most of a document's strings are short and plain (keys, ids, types): a byte loop finds
	// their end soonest. Longer ones, and any with an escape or a byte past ASCII, go on below.
short:
	for i := start + 1; i < start+32; i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			return d.text[start+1 : i], nil
		case c == '\\' || c >= utf8.RuneSelf:
			break short
		}
	}
	end, escaped := jsonvalid.StringEnd(d.data, start)
	d.pos = end
	if body := d.data[start+1 : end-1]; !escaped && utf8.Valid(body) {
		return d.text[start+1 : end-1], nil
	}
	var s string
	err := jsonvalid.UnmarshalString(d.data[start:end], &s)
	return s, err
}

// number reads the number at pos as encoding/json does into an interface: a float64.
func (d *valueDecoder) number() (any, error) {
	f, err := d.float()
	if err != nil {
		return nil, err
	}
	return f, nil
}

// float reads the number at pos as a float64, as number does.
func (d *valueDecoder) float() (float64, error) {
	start := d.pos
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case '-', '+', '.', 'e', 'E', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			d.pos++
			continue
		}
		break
	}
	f, err := strconv.ParseFloat(d.text[start:d.pos], 64)
	if err != nil {
		// Out of float64's range: encoding/json's error for it.
		var v any
		return 0, json.Unmarshal(d.data[start:d.pos], &v)
	}
	return f, nil
}
