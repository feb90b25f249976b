package metadata

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/homeindex/homeindex/protocol"
)

// Errors returned (wrapped) for names that are unsafe on disk.
var (
	ErrInvalidID     = errors.New("invalid document id")
	ErrInvalidModule = errors.New("invalid module name")
	ErrInvalidPath   = errors.New("invalid relative path")
	ErrInvalidName   = errors.New("invalid file name")
)

// maxIDLen bounds what we accept; ids longer than the file system's NAME_MAX (usually 255) still
// fail there, with ENAMETOOLONG.
const maxIDLen = 511

// moduleNameRE is the rule MODULES enforces (protocol.ModuleNamePattern): a module's directory
// name is its configured name.
var moduleNameRE = regexp.MustCompile(protocol.ModuleNamePattern)

// ValidID reports whether id is safe as a directory name: [A-Za-z0-9_-]{1,511}. xxh64 ids and
// legacy ids such as "hash1" pass; "", "../x", "a/b" and anything with NUL do not.
func ValidID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// ValidModuleName reports whether name matches protocol.ModuleNamePattern.
func ValidModuleName(name string) bool { return moduleNameRE.MatchString(name) }

func checkID(id string) error {
	if !ValidID(id) {
		return fmt.Errorf("%w: %q", ErrInvalidID, id)
	}
	return nil
}

func checkModule(name string) error {
	if !ValidModuleName(name) {
		return fmt.Errorf("%w: %q", ErrInvalidModule, name)
	}
	return nil
}

// checkFileName accepts a single path element that is not hidden: module files such as
// content.json. Hidden names are refused so they cannot be mistaken for anything of ours.
func checkFileName(name string) error {
	if name == "" || strings.ContainsAny(name, "/\x00") || strings.HasPrefix(name, ".") {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	return nil
}

// checkRel accepts a slash-separated, relative, cleaned path with no ".." element.
func checkRel(rel string) error {
	if rel == "" || rel == "." || strings.ContainsRune(rel, 0) || path.IsAbs(rel) ||
		path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("%w: %q", ErrInvalidPath, rel)
	}
	return nil
}
