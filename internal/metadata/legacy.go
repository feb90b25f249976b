package metadata

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/homeindex/homeindex/protocol"
)

// legacyContentSuffix marks old per-module text keys that upstream stripped on read.
const legacyContentSuffix = ".content"

// Problems LegacyDocuments reports to onBad (wrapped).
var (
	ErrNotDirectory = errors.New("not a directory")
	ErrIDMismatch   = errors.New("document id does not match its directory")
)

// LegacyDocuments calls fn with every by-id/*/document.json parsed as a protocol.Document, as
// written by the original Python implementation (or by us). Keys ending in ".content" are
// dropped, as upstream did, and so is `uid` (protocol.Document drops it). A bad entry (not a
// directory, unsafe name, unreadable file, invalid JSON, id different from the directory name)
// is passed to onBad, if not nil, and skipped: never deleted. A directory without document.json
// holds only module output and is skipped silently. An error from fn stops the walk and is
// returned as is.
func (s *Store) LegacyDocuments(fn func(protocol.Document) error, onBad func(path string, err error)) error {
	bad := func(p string, err error) {
		if onBad != nil {
			onBad(p, err)
		}
	}
	var fnErr error
	err := s.eachByID(func(e fs.DirEntry) error {
		dir := filepath.Join(s.byID, e.Name())
		if !ValidID(e.Name()) {
			bad(dir, fmt.Errorf("%w: %q", ErrInvalidID, e.Name()))
			return nil
		}
		if !e.IsDir() {
			bad(dir, ErrNotDirectory)
			return nil
		}
		p := filepath.Join(dir, documentName)
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			bad(p, err)
			return nil
		}
		var doc protocol.Document
		if err := json.Unmarshal(data, &doc); err != nil {
			bad(p, fmt.Errorf("invalid document: %w", err))
			return nil
		}
		if doc.ID != e.Name() {
			bad(p, fmt.Errorf("%w: id %q in directory %q", ErrIDMismatch, doc.ID, e.Name()))
			return nil
		}
		for k := range doc.Fields {
			if strings.HasSuffix(k, legacyContentSuffix) {
				delete(doc.Fields, k)
			}
		}
		if err := fn(doc); err != nil {
			fnErr = err
			return err
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("read legacy documents: %w", err)
	}
	return nil
}
