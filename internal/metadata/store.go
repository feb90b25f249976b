package metadata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/homeindex/homeindex/internal/durable"
	"github.com/homeindex/homeindex/internal/jsonvalid"
)

// Names inside the metadata root.
const (
	byIDDir      = "by-id"
	byPathDir    = "by-path"
	tmpDirName   = ".tmp"
	documentName = "document.json"
)

// Store is a metadata directory. Its methods touch only files below Root.
type Store struct {
	root   string
	byID   string
	byPath string

	// treeMu orders changes to by-path's directories: without it an Unlink could prune a
	// parent directory between a concurrent Link's mkdir and its rename.
	treeMu sync.Mutex
	// lastParent is the by-path directory (relative, slash form) whose parents the last Link
	// checked or made; removals forget it. Guarded by treeMu.
	lastParent string

	deferSync bool // set once before use by DeferSync

	// spares replace documents, and files written with syncs, in place of temp files
	// (durable.Spares; writeAtomicIn).
	spares *durable.Spares

	// mkdirFirst: the last ensureDir that had to create its directory did; the next one tries
	// mkdir before lstat (ensureDir).
	mkdirFirst atomic.Bool
	// noTmpfile: this file system cannot create a file unnamed and link it (durable.CreateFile),
	// so new documents go through the temp directory as replaced ones do.
	noTmpfile atomic.Bool
}

// Open returns the store rooted at root, creating root, by-id, by-path and the temp directory
// as needed. The root is made absolute so later changes of the working directory do not matter.
func Open(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("open metadata directory: %w", err)
	}
	s := &Store{root: abs, byID: filepath.Join(abs, byIDDir), byPath: filepath.Join(abs, byPathDir)}
	s.spares = durable.NewSpares(s.tmpDir(), "spare.*")
	for _, dir := range []string{s.byID, s.byPath, s.tmpDir()} {
		if err := os.MkdirAll(dir, dirPerm); err != nil {
			return nil, fmt.Errorf("open metadata directory: %w", err)
		}
	}
	return s, nil
}

// Root returns the absolute path of the metadata directory.
func (s *Store) Root() string { return s.root }

func (s *Store) tmpDir() string { return filepath.Join(s.root, tmpDirName) }

// DocumentDir returns the path of by-id/<id>, or "" when id is not a valid id.
func (s *Store) DocumentDir(id string) string {
	if !ValidID(id) {
		return ""
	}
	return under(s.byID, id)
}

// under joins a directory this store built (its absolute root's, cleaned once) and a name its
// callers checked (one path element: checkID, checkModule, checkFileName): filepath.Join's
// result without its Clean, which a first sync paid three times per file.
func under(dir, name string) string { return dir + string(filepath.Separator) + name }

// WriteDocument writes by-id/<id>/document.json atomically, indented with 4 spaces as upstream
// did. doc must be a JSON object; its formatting does not matter. It returns false, writing
// nothing, when the file already holds the same bytes, so replays neither write nor touch mtimes.
func (s *Store) WriteDocument(id string, doc []byte) (written bool, err error) {
	if err := checkID(id); err != nil {
		return false, fmt.Errorf("write document: %w", err)
	}
	data, err := indentObject(doc)
	if err != nil {
		return false, fmt.Errorf("write document %s: %w", id, err)
	}
	return s.WriteIndentedDocument(id, data)
}

// WriteIndentedDocument is WriteDocument for bytes already in document.json's form: a JSON
// object as json.MarshalIndent(v, "", "    ") writes it, plus a final newline. The caller
// vouches for the form; nothing is re-indented.
func (s *Store) WriteIndentedDocument(id string, data []byte) (written bool, err error) {
	if err := checkID(id); err != nil {
		return false, fmt.Errorf("write document: %w", err)
	}
	dir := under(s.byID, id)
	created, err := s.ensureDir(dir)
	if err != nil {
		return false, fmt.Errorf("write document %s: %w", id, err)
	}
	written, err = s.writeAtomicIn(dir, documentName, data, created, true)
	if err != nil {
		return false, fmt.Errorf("write document %s: %w", id, err)
	}
	return written, nil
}

// indentObject returns doc re-indented with 4 spaces and a final newline. Compacting first
// makes the output independent of the input's formatting.
func indentObject(doc []byte) ([]byte, error) {
	if jsonvalid.Valid(doc) { // nearly always: the outbox renders documents itself
		if out := indentValid(doc); len(out) > 1 && out[0] == '{' {
			return out, nil
		}
		return nil, errors.New("invalid JSON: want an object")
	}
	return indentDecoded(doc)
}

// indentValid is json.Compact then json.Indent(dst, src, "", "    ") plus a newline, in one
// pass, for valid JSON (what every module hop writes): whitespace outside strings is dropped,
// each member and element goes on a line of its own, empty objects and arrays stay "{}" and
// "[]".
func indentValid(doc []byte) []byte {
	out := make([]byte, 0, len(doc)*5/4+16)
	depth := 0
	newline := func() {
		out = append(out, '\n')
		for range depth {
			out = append(out, "    "...)
		}
	}
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; c {
		case ' ', '\t', '\r', '\n':
		case '"':
			j := i + 1
			for doc[j] != '"' {
				if doc[j] == '\\' {
					j++
				}
				j++
			}
			out = append(out, doc[i:j+1]...)
			i = j
		case '{', '[':
			k := i + 1
			for doc[k] == ' ' || doc[k] == '\t' || doc[k] == '\r' || doc[k] == '\n' {
				k++
			}
			if doc[k] == '}' || doc[k] == ']' {
				out = append(out, c, doc[k])
				i = k
				continue
			}
			out = append(out, c)
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			out = append(out, c)
		case ',':
			out = append(out, ',')
			newline()
		case ':':
			out = append(out, ':', ' ')
		default:
			out = append(out, c)
		}
	}
	return append(out, '\n')
}

// indentDecoded is indentObject through encoding/json, which says what is wrong with doc.
func indentDecoded(doc []byte) ([]byte, error) {
	var c bytes.Buffer
	if err := json.Compact(&c, doc); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if c.Len() == 0 || c.Bytes()[0] != '{' {
		return nil, errors.New("invalid JSON: want an object")
	}
	var out bytes.Buffer
	out.Grow(c.Len() * 5 / 4)
	if err := json.Indent(&out, c.Bytes(), "", "    "); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// ReadDocument returns the bytes of by-id/<id>/document.json. A missing document gives an error
// that matches fs.ErrNotExist.
func (s *Store) ReadDocument(id string) ([]byte, error) {
	if err := checkID(id); err != nil {
		return nil, fmt.Errorf("read document: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(s.byID, id, documentName))
	if err != nil {
		return nil, fmt.Errorf("read document %s: %w", id, err)
	}
	return b, nil
}

// RemoveDocument removes by-id/<id> with all module output in it. A missing directory is fine.
func (s *Store) RemoveDocument(id string) error {
	if err := checkID(id); err != nil {
		return fmt.Errorf("remove document: %w", err)
	}
	// RemoveAll does not follow symlinks, so a planted link cannot lead outside the root.
	if err := os.RemoveAll(filepath.Join(s.byID, id)); err != nil {
		return fmt.Errorf("remove document %s: %w", id, err)
	}
	if err := s.syncDir(s.byID); err != nil {
		return fmt.Errorf("remove document %s: %w", id, err)
	}
	return nil
}

// ModuleDir returns by-id/<id>/<module>, creating it and by-id/<id> if needed.
func (s *Store) ModuleDir(id, module string) (string, error) {
	if err := checkID(id); err != nil {
		return "", fmt.Errorf("module dir: %w", err)
	}
	if err := checkModule(module); err != nil {
		return "", fmt.Errorf("module dir: %w", err)
	}
	docDir := under(s.byID, id)
	dir := under(docDir, module)
	for _, d := range []string{docDir, dir} {
		if _, err := s.ensureDir(d); err != nil {
			return "", fmt.Errorf("module dir %s/%s: %w", id, module, err)
		}
	}
	return dir, nil
}

// WriteModuleFile writes by-id/<id>/<module>/<name> (content.json, chunks.json, ...) with the
// same atomic rules as WriteDocument, as given (no re-indent). An identical file is left alone.
// name must be a single, non-hidden path element.
func (s *Store) WriteModuleFile(id, module, name string, data []byte) error {
	if err := checkFileName(name); err != nil {
		return fmt.Errorf("write module file: %w", err)
	}
	dir, err := s.ModuleDir(id, module)
	if err != nil {
		return fmt.Errorf("write module file: %w", err)
	}
	if _, err := s.writeAtomic(dir, name, data); err != nil {
		return fmt.Errorf("write module file %s/%s/%s: %w", id, module, name, err)
	}
	return nil
}
