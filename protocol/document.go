// Package protocol holds what the daemon and module processes must agree on: the document shape,
// Redis key names and message structs. It imports nothing of ours (a leaf, like River's rivertype).
package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/homeindex/homeindex/internal/jsonvalid"
)

// CurrentVersion is the document schema version (upstream migrations.CURRENT_VERSION).
const CurrentVersion = 1

// PathEntry is one path of a document: its path relative to INDEX_DIRECTORY and its mtime
// truncated to 4 decimals.
type PathEntry struct {
	Path  string
	Mtime float64
}

// Paths is the `paths` object {relpath: mtime}. It is a slice because order matters on the
// wire: modules open the first key, so the daemon puts an available path first. JSON
// (un)marshalling keeps the slice order.
type Paths []PathEntry

// MarshalJSON writes the paths as a JSON object in slice order.
func (p Paths) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		v, err := json.Marshal(e.Mtime)
		if err != nil {
			return nil, err
		}
		b.Write(AppendName(nil, e.Path))
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON object keeping key order. Keys are names: their exact bytes come
// back (see Name).
func (p *Paths) UnmarshalJSON(data []byte) error {
	if out, ok := scanPaths(data); ok {
		*p = out
		return nil
	}
	return p.decode(data)
}

// decode is UnmarshalJSON through encoding/json's decoder.
func (p *Paths) decode(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*p = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("paths: want a JSON object")
	}
	out := Paths{}
	for dec.More() {
		from := dec.InputOffset()
		if _, err := dec.Token(); err != nil {
			return err
		}
		k, err := UnquoteName(bytes.TrimLeft(data[from:dec.InputOffset()], " \t\r\n,"))
		if err != nil {
			return fmt.Errorf("paths key: %w", err)
		}
		var n json.Number
		if err := dec.Decode(&n); err != nil {
			return fmt.Errorf("paths[%q]: %w", k, err)
		}
		f, err := n.Float64()
		if err != nil {
			return fmt.Errorf("paths[%q]: %w", k, err)
		}
		out = append(out, PathEntry{Path: k, Mtime: f})
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*p = out
	return nil
}

// scanPaths is UnmarshalJSON for valid JSON whose keys are names and values numbers, nearly
// every paths object: one pass, no decoder. ok is false for anything else, which the decoder
// then reads and, when it is wrong, says why.
func scanPaths(data []byte) (_ Paths, ok bool) {
	if !jsonvalid.Valid(data) {
		return nil, false
	}
	return scanValidPaths(data)
}

// scanValidPaths is scanPaths for data known to be valid JSON.
func scanValidPaths(data []byte) (_ Paths, ok bool) {
	i := jsonvalid.SkipSpace(data, 0)
	switch data[i] {
	case 'n':
		return nil, true // null
	case '{':
	default:
		return nil, false
	}
	out := Paths{}
	if i = jsonvalid.SkipSpace(data, i+1); data[i] == '}' {
		return out, true
	}
	for {
		end := jsonvalid.SkipValue(data, i) // data is valid: a key, a colon, a value, then , or }
		k, err := UnquoteName(data[i:end])
		if err != nil {
			return nil, false
		}
		i = jsonvalid.SkipSpace(data, jsonvalid.SkipSpace(data, end)+1)
		if c := data[i]; c != '-' && (c < '0' || c > '9') {
			return nil, false
		}
		end = jsonvalid.SkipValue(data, i)
		f, err := strconv.ParseFloat(string(data[i:end]), 64)
		if err != nil {
			return nil, false
		}
		out = append(out, PathEntry{Path: k, Mtime: f})
		if i = jsonvalid.SkipSpace(data, end); data[i] == '}' {
			return out, true
		}
		i = jsonvalid.SkipSpace(data, i+1)
	}
}

// Core field names. They belong to the daemon and are never taken from module output.
const (
	FieldID              = "id"
	FieldPaths           = "paths"
	FieldMtime           = "mtime"
	FieldSize            = "size"
	FieldType            = "type"
	FieldNext            = "next"
	FieldPathsList       = "paths_list"
	FieldCopies          = "copies"
	FieldVersion         = "version"
	FieldHasArchivePaths = "has_archive_paths"
	FieldOffline         = "offline"
	FieldUID             = "uid"
	// FieldFailures maps a module name to its parked job's {reason, attempts, at}: the daemon
	// records why a module gave up on the file, and the file moves on down the chain.
	FieldFailures = "failures"
)

// coreFields lists the core fields in the order upstream writes them. Job fields added to queue
// items (see item.go) are core too.
var coreFields = []string{FieldID, FieldPaths, FieldMtime, FieldSize, FieldType, FieldNext,
	FieldPathsList, FieldCopies, FieldVersion, FieldHasArchivePaths, FieldOffline, FieldUID, FieldFailures}

// IsCoreField reports whether a top-level key is owned by the daemon. The comparison is exact:
// JSON keys are case-sensitive, so "ID" is an ordinary module field (the merger may still
// reject it as ambiguous).
func IsCoreField(k string) bool {
	for _, c := range coreFields {
		if c == k {
			return true
		}
	}
	return strings.HasPrefix(k, JobFieldPrefix)
}

// Document is one metadata document: the core fields plus every field modules added.
type Document struct {
	ID              string
	Paths           Paths
	Mtime           float64
	Size            int64
	Type            string
	Next            string
	PathsList       []string
	Copies          int
	Version         int
	HasArchivePaths bool
	Offline         bool
	// Failures is the `failures` object, omitted when empty.
	Failures json.RawMessage
	// Fields holds the module-owned top-level fields, raw. Never a core field.
	Fields map[string]json.RawMessage
}

// MarshalJSON writes core fields in upstream order, then module fields sorted by key: the
// bytes json.Marshal gives for d, compact, with <, > and & escaped as encoding/json escapes
// them, so a caller may use these bytes without json.Marshal's second pass over them.
func (d Document) MarshalJSON() ([]byte, error) {
	return d.appendJSON(make([]byte, 0, 512))
}

func (d Document) appendJSON(b []byte) ([]byte, error) {
	var err error
	b = append(b, '{')
	b = appendKey(b, FieldID, false)
	b = appendJSONString(b, d.ID)
	b = appendKey(b, FieldPaths, true)
	b = append(b, '{')
	for i, e := range d.Paths {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendHTMLSafeName(b, e.Path)
		b = append(b, ':')
		if b, err = appendFloat(b, FieldPaths, e.Mtime); err != nil {
			return nil, err
		}
	}
	b = append(b, '}')
	b = appendKey(b, FieldMtime, true)
	if b, err = appendFloat(b, FieldMtime, d.Mtime); err != nil {
		return nil, err
	}
	b = appendKey(b, FieldSize, true)
	b = strconv.AppendInt(b, d.Size, 10)
	b = appendKey(b, FieldType, true)
	b = appendJSONString(b, d.Type)
	b = appendKey(b, FieldNext, true)
	b = appendJSONString(b, d.Next)
	b = appendKey(b, FieldPathsList, true)
	b = append(b, '[')
	for i, p := range d.PathsList {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendHTMLSafeName(b, p)
	}
	b = append(b, ']')
	b = appendKey(b, FieldCopies, true)
	b = strconv.AppendInt(b, int64(d.Copies), 10)
	b = appendKey(b, FieldVersion, true)
	b = strconv.AppendInt(b, int64(d.Version), 10)
	b = appendKey(b, FieldHasArchivePaths, true)
	b = strconv.AppendBool(b, d.HasArchivePaths)
	b = appendKey(b, FieldOffline, true)
	b = strconv.AppendBool(b, d.Offline)
	if len(d.Failures) > 0 && string(d.Failures) != "{}" && string(d.Failures) != "null" {
		b = appendKey(b, FieldFailures, true)
		if b, err = appendRaw(b, FieldFailures, d.Failures); err != nil {
			return nil, err
		}
	}
	keys := make([]string, 0, len(d.Fields))
	for k := range d.Fields {
		if !IsCoreField(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		b = append(b, ',')
		b = appendJSONString(b, k)
		b = append(b, ':')
		if b, err = appendRaw(b, k, d.Fields[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// member is where UnmarshalJSON decodes the core field k, or nil when k is not one: then v,
// a module's field, is kept in Fields (`uid` and job fields are dropped).
func (d *Document) member(k string, v json.RawMessage) any {
	switch k {
	case FieldID:
		return &d.ID
	case FieldPaths:
		return &d.Paths
	case FieldMtime:
		return &d.Mtime
	case FieldSize:
		return &d.Size
	case FieldType:
		return &d.Type
	case FieldNext:
		return &d.Next
	case FieldPathsList:
		return (*nameList)(&d.PathsList)
	case FieldCopies:
		return &d.Copies
	case FieldVersion:
		return &d.Version
	case FieldHasArchivePaths:
		return &d.HasArchivePaths
	case FieldOffline:
		return &d.Offline
	case FieldFailures:
		return &d.Failures
	}
	if !IsCoreField(k) {
		if d.Fields == nil {
			d.Fields = map[string]json.RawMessage{}
		}
		d.Fields[k] = v
	}
	return nil
}

// UnmarshalJSON reads a document. Unknown top-level keys go to Fields; `uid` and job fields are
// dropped (they belong to queue items, not documents).
func (d *Document) UnmarshalJSON(data []byte) error {
	// One pass splits the members (EachMember); only the core fields are decoded. The module
	// fields are kept as slices of one copy of data (json.Unmarshal's buffer is not ours).
	data = bytes.Clone(data)
	*d = Document{}
	err := EachMember(data, func(k string, v json.RawMessage) error {
		dst := d.member(k, v)
		if dst == nil {
			return nil
		}
		if string(v) == "null" {
			reflect.ValueOf(dst).Elem().SetZero() // a repeated key: the last one counts
			return nil
		}
		if err := decodeCore(v, dst); err != nil {
			return fmt.Errorf("document field %q: %w", k, err)
		}
		return nil
	})
	if errors.Is(err, errNotObject) {
		return errors.New("document: want a JSON object")
	}
	return err
}

// decodeCore is json.Unmarshal(v, dst) for a core field, v valid JSON, without encoding/json's
// reflection when v is a plain string, integer, number or boolean, and without the second
// validity check json.Unmarshal makes before the names' UnmarshalJSON (EachMember checked the
// whole document). Each item an SDK worker takes is a document; its dozen core fields through
// the reflection were most of its parsing.
func decodeCore(v json.RawMessage, dst any) error {
	switch p := dst.(type) {
	case *Paths:
		if ps, ok := scanValidPaths(v); ok {
			*p = ps
			return nil
		}
	case *nameList:
		if l, ok := scanValidNames(v); ok {
			*p = l
			return nil
		}
	case *string:
		return DecodeString(v, p)
	case *int64:
		x, err := decodeInt(v, 64)
		*p = x
		return err
	case *int:
		x, err := decodeInt(v, strconv.IntSize)
		*p = int(x)
		return err
	case *float64:
		if f, err := strconv.ParseFloat(string(v), 64); err == nil { // fails on a non-number and ±Inf
			*p = f
			return nil
		}
	case *bool:
		switch string(v) {
		case "true", "false":
			*p = v[0] == 't'
			return nil
		}
	}
	return json.Unmarshal(v, dst)
}
