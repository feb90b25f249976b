package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// The reference below is PrepareFile as it was before it held documents as sorted members and
// wrote the derived values by hand: a map of raw members, json.Encoder for every derived value,
// json.Unmarshal for type, mtime and every module object. The new one must give its bytes.

// PrepareFile turns a metadata document into its files index form: the paths object becomes
// an array (path_entries) and the derived fields are added. archiveRel is the archive
// directory relative to the files root ("archive"); a path below it is on the drive named by
// its next element.
func prepareFileReference(raw json.RawMessage, archiveRel string) (json.RawMessage, error) {
	// Sized for a document with a few modules' fields, so filling it seldom grows it.
	doc := make(map[string]json.RawMessage, 32)
	err := protocol.EachMember(raw, func(k string, v json.RawMessage) error {
		doc[k] = v
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalidDocument)
	}
	var paths []pathEntry
	if p, ok := doc[fieldPaths]; ok {
		var err error
		if paths, err = decodePathsReference(p); err != nil {
			return nil, fmt.Errorf("%w: paths: %w", ErrInvalidDocument, err)
		}
		delete(doc, fieldPaths)
		doc[fieldPathEntries] = pathEntriesJSONReference(paths)
	}
	for _, k := range []string{FieldKind, FieldExtension, FieldDrive, FieldYear, FieldDate, FieldCamera, FieldName, FieldSortName} {
		delete(doc, k)
	}
	var mime string
	_ = json.Unmarshal(doc["type"], &mime)
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
	doc[FieldKind] = mustJSON(Kind(mime, ext))
	if ext != "" {
		doc[FieldExtension] = mustJSON(ext)
	}
	if name != "" {
		doc[FieldName] = mustJSON(name)
		doc[FieldSortName] = mustJSON(strings.ToLower(name))
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
		doc[FieldDrive] = mustJSON(drives)
	}
	var mtime float64
	_ = json.Unmarshal(doc["mtime"], &mtime)
	date, camera := moduleDateAndCameraReference(doc)
	if date == nil && mtime != 0 {
		date = &mtime
	}
	if date != nil {
		doc[FieldDate] = mustJSON(math.Floor(*date))
		doc[FieldYear] = mustJSON(time.Unix(int64(math.Floor(*date)), 0).UTC().Year())
	}
	if camera != "" {
		doc[FieldCamera] = mustJSON(camera)
	}
	return marshalObjectReference(doc), nil
}

// marshalObject returns what json.Marshal gives for doc (keys sorted, values compacted, <, >,
// & and U+2028/U+2029 escaped), without its reflection and its validation of every value
// (a module hop writes each document again): the values were decoded by json.Unmarshal or
// written by mustJSON, so they are valid JSON, and the keys valid UTF-8, which AppendName
// escapes as encoding/json does.
func marshalObjectReference(doc map[string]json.RawMessage) json.RawMessage {
	keys := make([]string, 0, len(doc))
	size := 2
	for k, v := range doc {
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	slices.Sort(keys)
	b := make([]byte, 1, size)
	b[0] = '{'
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = protocol.AppendName(b, k)
		b = append(b, ':')
		b = append(b, doc[k]...)
	}
	b = append(b, '}')
	if bytes.ContainsAny(b, " \t\r\n") { // whitespace, maybe between tokens
		var c bytes.Buffer
		_ = json.Compact(&c, b)
		b = c.Bytes()
	}
	if bytes.ContainsAny(b, "<>&\u2028\u2029") {
		var e bytes.Buffer
		json.HTMLEscape(&e, b)
		b = e.Bytes()
	}
	return b
}

// decodePaths reads a {path: mtime} object in key order, names as their exact bytes (PEP 383
// escapes in the JSON, see protocol.Name).
func decodePathsReference(raw json.RawMessage) ([]pathEntry, error) {
	var ps protocol.Paths
	if err := json.Unmarshal(raw, &ps); err != nil {
		return nil, err
	}
	out := make([]pathEntry, 0, len(ps))
	for _, p := range ps {
		out = append(out, pathEntry{Path: p.Path, Mtime: p.Mtime})
	}
	return out, nil
}

// moduleDateAndCamera looks through the module fields (objects, in key order) for the first
// date taken ("date_unix") and camera ("camera", else "camera_make" and "camera_model").
func moduleDateAndCameraReference(doc map[string]json.RawMessage) (*float64, string) {
	keys := make([]string, 0, len(doc))
	for k, v := range doc {
		if len(v) > 0 && v[0] == '{' {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var date *float64
	camera := ""
	for _, k := range keys {
		var f struct {
			DateUnix    *float64 `json:"date_unix"`
			Camera      string   `json:"camera"`
			CameraMake  string   `json:"camera_make"`
			CameraModel string   `json:"camera_model"`
		}
		if json.Unmarshal(doc[k], &f) != nil {
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

func pathEntriesJSONReference(paths []pathEntry) json.RawMessage {
	b := []byte{'['}
	for i, p := range paths {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"path":`...)
		b = protocol.AppendName(b, p.Path)
		b = append(b, `,"mtime":`...)
		b = append(b, mustJSON(p.Mtime)...)
		b = append(b, '}')
	}
	return append(b, ']')
}

// prepareFixtures returns random documents shaped like the daemon's, with what can go wrong:
// names that are not UTF-8 or hold <, >, &, U+2028 and quotes; derived fields and
// path_entries already present; module objects that name a date or a camera in any case or
// through \u escapes; values spread over lines; keys given twice; types that are not strings.
func prepareFixtures(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	names := []string{`"a/b.txt"`, `"d01/f00001.TXT"`, `"archive/drive1/photos/IMG_1.JPG"`, `"archive/drive 2/x.tar.gz"`,
		`"archive/x"`, `"archive/"`, `".bashrc"`, `"noext"`, `"dir.d/file."`, `"<b>&amp;</b>.html"`, `"line\u2028sep.txt"`,
		`"bad\udcff\udc80.bin"`, `"caf\u00e9/\u65e5\u672c.pdf"`, `"q\"uote\\back.md"`, `"tab\there.txt"`, `"UPPER/CASE.PNG"`}
	nums := []string{"0", "1", "-1", "1795745275.9935", "1e21", "1.5e-7", "123456789012345", "-0.5", "2.5E+3", "100000000000000000000"}
	var out []string
	for range n {
		var ms []string
		add := func(k, v string) { ms = append(ms, k+":"+v) }
		add(`"id"`, fmt.Sprintf(`"%016x"`, r.Uint64()))
		if r.IntN(10) > 0 {
			var ps []string
			for range r.IntN(4) {
				ps = append(ps, pick(names...)+":"+pick(nums...))
			}
			add(`"paths"`, "{"+strings.Join(ps, ",")+"}")
		}
		add(`"type"`, pick(`"text/plain"`, `"image/jpeg"`, `"Video/MP4; codecs=x"`, `"application/pdf"`, `"application/vnd.openxmlformats-officedocument.wordprocessingml.document"`,
			`"text/\u0068tml"`, `"caf\u00e9/x"`, `5`, `null`, `""`, `"audio/<x>"`))
		add(`"size"`, pick(nums...))
		if r.IntN(8) > 0 {
			add(`"mtime"`, pick(append(nums, `"x"`, `null`, `1e400`)...))
		}
		add(`"next"`, pick(`""`, `"m1"`))
		add(`"offline"`, pick(`true`, `false`))
		if r.IntN(4) == 0 {
			add(pick(`"kind"`, `"name"`, `"sort_name"`, `"drive"`, `"year"`, `"date"`, `"camera"`, `"extension"`, `"path_entries"`), pick(`"stale"`, `[1,2]`, `{"a":1}`))
		}
		for range r.IntN(4) {
			mod := pick(`"exif"`, `"m1"`, `"media"`, `"ocr"`, `"a\u0062c"`, `"zz"`)
			var fs []string
			for range r.IntN(4) {
				fs = append(fs, pick(`"date_unix":`+pick(nums...), `"DATE_UNIX":1600000000.5`, `"date_unix":"x"`, `"camera":" Canon EOS "`,
					`"Camera":"<Nikon & co>"`, `"camera_make":"Apple"`, `"camera_model":" iPhone 12 "`, `"CAMERA_MAKE":"Sony"`,
					`"\u0063amera":"Escaped"`, `"text":"hello\nworld"`, `"noop":true`, `"nested":{"camera":"inner"}`, `"list":[1, 2 ,3]`))
			}
			v := "{" + strings.Join(fs, ",") + "}"
			if r.IntN(3) == 0 {
				v = strings.ReplaceAll(v, ",", " ,\n  ")
			}
			add(mod, pick(v, `true`, `"text"`, `[{"camera":"in array"}]`))
		}
		if r.IntN(6) == 0 {
			add(`"next"`, `"dup"`) // a key given twice: the last one counts
		}
		r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
		sep := pick(",", " , ", ",\n\t")
		out = append(out, "{"+strings.Join(ms, sep)+"}")
	}
	return append(out, `{}`, `[1]`, `{"paths":5}`, `{"paths":{"a":"x"}}`, `{"paths":{"\ud800":1}}`, `{"paths":null,"id":"x"}`, `{`)
}

func TestPrepareFileMatchesReference(t *testing.T) {
	t.Parallel()
	for i, raw := range prepareFixtures(3000, 7) {
		checkPrepareFile(t, i, []byte(raw))
	}
}

func FuzzPrepareFileMatchesReference(f *testing.F) {
	for _, raw := range prepareFixtures(40, 8) {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkPrepareFile(t, 0, raw) })
}

func checkPrepareFile(t *testing.T, i int, raw []byte) {
	t.Helper()
	for _, archive := range []string{"archive", ""} {
		got, err := PrepareFile(raw, archive)
		want, werr := prepareFileReference(raw, archive)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("document %d %s: error %v, reference %v", i, raw, err, werr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("document %d %s (archive %q):\n got %s\nwant %s", i, raw, archive, got, want)
		}
	}
}
