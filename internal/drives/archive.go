// Package drives knows the archive drives under ARCHIVE_DIRECTORY: which are present, which drive
// a path is on, and the per-drive status markers <drive>-status-ready|pending beside them.
package drives

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrInvalidDrive is returned (wrapped) for a drive name that is not a single path element.
var ErrInvalidDrive = errors.New("invalid drive name")

// Archive is the archive directory. Each immediate subdirectory is a drive.
type Archive struct {
	dir string
}

// New returns the archive rooted at dir. It touches nothing on disk.
func New(dir string) Archive { return Archive{dir: filepath.Clean(dir)} }

// Dir returns the archive directory.
func (a Archive) Dir() string { return a.dir }

// ValidName reports whether name can be a drive: one path element, not "", "." or "..".
func ValidName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

func checkName(name string) error {
	if !ValidName(name) {
		return fmt.Errorf("%w: %q", ErrInvalidDrive, name)
	}
	return nil
}

// Present returns the present drives (name → true): subdirectories of the archive directory that
// are not empty, since an empty mount point is an unplugged drive. It reads the archive directory
// and at most one entry of each subdirectory, never a whole drive. A missing archive directory
// gives an empty map. A drive that cannot be read counts as absent and is named in the error,
// which comes with the map of the drives that could be read.
func (a Archive) Present() (map[string]bool, error) {
	present := map[string]bool{}
	entries, err := os.ReadDir(a.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return present, nil
	}
	if err != nil {
		return present, fmt.Errorf("list drives: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			continue // markers and other files in the archive root
		}
		ok, err := nonEmptyDir(filepath.Join(a.dir, e.Name()))
		if err != nil {
			errs = append(errs, fmt.Errorf("drive %s: %w", e.Name(), err))
			continue
		}
		if ok {
			present[e.Name()] = true
		}
	}
	if err := errors.Join(errs...); err != nil {
		return present, fmt.Errorf("list drives: %w", err)
	}
	return present, nil
}

// IsPresent reports whether the drive's directory exists and is not empty. An unreadable drive
// is absent.
func (a Archive) IsPresent(name string) bool {
	if !ValidName(name) {
		return false
	}
	ok, err := nonEmptyDir(filepath.Join(a.dir, name))
	return err == nil && ok
}

// nonEmptyDir reports whether p is a directory (or a link to one) with at least one entry. A
// symlink to a non-directory is not a drive: false, no error.
func nonEmptyDir(p string) (bool, error) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, nil
	}
	d, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer d.Close()
	_, err = d.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// DriveOf returns the drive that rel, a slash-separated file path relative to INDEX_DIRECTORY,
// lies on, given the archive directory's path relative to INDEX_DIRECTORY (for example
// "archive"; "" or "." when the archive directory is INDEX_DIRECTORY itself).
// "archive/drive1/x.txt" gives ("drive1", true). A file directly in the archive root
// ("archive/drive1-status-ready") is on no drive, nor is a path outside the archive, nor anything
// when the archive lies outside INDEX_DIRECTORY. Pure string logic: nothing is read.
func DriveOf(archiveRel, rel string) (string, bool) {
	a, r := path.Clean(archiveRel), path.Clean(rel)
	if outside(a) || outside(r) || r == "." {
		return "", false
	}
	rest := r
	if a != "." {
		var found bool
		if rest, found = strings.CutPrefix(r, a+"/"); !found {
			return "", false
		}
	}
	drive, tail, found := strings.Cut(rest, "/")
	if !found || tail == "" {
		return "", false
	}
	return drive, true
}

// outside reports whether a cleaned path leaves its base.
func outside(p string) bool {
	return path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../")
}
