package metadata

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// linkTarget returns the relative target of by-path/<rel>: one ".." per directory between the
// link and the root, so the tree still resolves after the whole directory moves.
func linkTarget(rel, id string) string {
	return strings.Repeat("../", strings.Count(rel, "/")+1) + byIDDir + "/" + id
}

// Link makes by-path/<rel> a relative symlink to by-id/<id>, creating parent directories. An
// existing link is replaced atomically (temp link, rename); one that already points at id is
// left alone. rel is slash-separated, relative and clean. Entries standing in the way are stale
// by construction (a path cannot be a file and a directory at once) and are replaced: a symlink
// where a parent directory should be, or a directory of links where the link should be.
func (s *Store) Link(rel, id string) error {
	if err := checkRel(rel); err != nil {
		return fmt.Errorf("link: %w", err)
	}
	if err := checkID(id); err != nil {
		return fmt.Errorf("link %s: %w", rel, err)
	}
	dir, err := s.link(rel, id)
	if err == nil && dir != "" {
		err = s.syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("link %s: %w", rel, err)
	}
	return nil
}

// link places the link under the tree lock and returns the directory to fsync, or "" when the
// link was already in place.
func (s *Store) link(rel, id string) (string, error) {
	s.treeMu.Lock()
	defer s.treeMu.Unlock()
	if err := s.makeParents(rel); err != nil {
		return "", err
	}
	dst := filepath.Join(s.byPath, filepath.FromSlash(rel))
	target := linkTarget(rel, id)
	// Nothing there yet (every link of a first sync): the symlink is created in place, which is
	// atomic already. Anything in the way takes the replacing path below.
	err := os.Symlink(target, dst)
	if err == nil {
		return filepath.Dir(dst), nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", err
	case fi.Mode()&fs.ModeSymlink != 0:
		if cur, err := os.Readlink(dst); err == nil && cur == target {
			return "", nil
		}
	case fi.IsDir():
		// Only links and directories live in by-path, and RemoveAll does not follow links.
		s.lastParent = ""
		if err := os.RemoveAll(dst); err != nil {
			return "", err
		}
	}
	tmp, err := s.tempName("link")
	if err != nil {
		return "", err
	}
	if err := os.Symlink(target, tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	return filepath.Dir(dst), nil
}

// makeParents creates the directories of rel below by-path without following symlinks: a
// symlink or file in the way is a stale link and is replaced by a directory.
func (s *Store) makeParents(rel string) error {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return nil // directly below by-path
	}
	parent := rel[:i]
	if parent == s.lastParent {
		return nil // checked by the previous link; nothing removed directories since
	}
	s.lastParent = ""
	if err := s.checkParents(rel); err != nil {
		return err
	}
	s.lastParent = parent
	return nil
}

// checkParents is makeParents without the memory of the last parent.
func (s *Store) checkParents(rel string) error {
	dir := s.byPath
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, p)
		fi, err := os.Lstat(dir)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if _, err := s.ensureDir(dir); err != nil {
			return err
		}
	}
	return nil
}

// parentsAreDirs reports whether every parent of by-path/<rel> exists as a real directory. When
// one does not, no link can exist at rel, and looking through a symlinked parent would leave
// the root.
func (s *Store) parentsAreDirs(rel string) (bool, error) {
	dir := s.byPath
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, p)
		fi, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !fi.IsDir() {
			return false, nil
		}
	}
	return true, nil
}

// Unlink removes the link by-path/<rel>, then every parent directory left empty, up to but not
// including by-path. A missing link is fine; a directory at rel is not a link and is left alone.
func (s *Store) Unlink(rel string) error {
	if err := checkRel(rel); err != nil {
		return fmt.Errorf("unlink: %w", err)
	}
	dir, err := s.unlink(rel)
	if err == nil && dir != "" {
		err = s.syncDir(dir)
		if errors.Is(err, fs.ErrNotExist) { // pruned: its parent no longer lists the link either
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("unlink %s: %w", rel, err)
	}
	return nil
}

// unlink removes the link and prunes under the tree lock, and returns the directory to fsync,
// or "" when nothing was removed.
func (s *Store) unlink(rel string) (string, error) {
	s.treeMu.Lock()
	defer s.treeMu.Unlock()
	ok, err := s.parentsAreDirs(rel)
	if err != nil || !ok {
		return "", err
	}
	dst := filepath.Join(s.byPath, filepath.FromSlash(rel))
	var synced string
	fi, err := os.Lstat(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", err
	case fi.IsDir():
		return "", nil
	default:
		if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		synced = filepath.Dir(dst)
	}
	// Prune even when the link was already gone: a crash may have come between the two steps.
	s.lastParent = ""
	for dir := filepath.Dir(dst); dir != s.byPath; dir = filepath.Dir(dir) {
		err := syscall.Rmdir(dir)
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
			break
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("prune %s: %w", dir, err)
		}
	}
	return synced, nil
}

// LinkTarget reads by-path/<rel>. ok reports whether a symlink is there; id is the document it
// points to, or "" when its target is not by-id/<valid id> of this store (a foreign or broken
// link, which Link would replace).
func (s *Store) LinkTarget(rel string) (id string, ok bool, err error) {
	if err := checkRel(rel); err != nil {
		return "", false, fmt.Errorf("link target: %w", err)
	}
	parentsOK, err := s.parentsAreDirs(rel)
	if err != nil {
		return "", false, fmt.Errorf("link target %s: %w", rel, err)
	}
	if !parentsOK {
		return "", false, nil
	}
	dst := filepath.Join(s.byPath, filepath.FromSlash(rel))
	target, err := os.Readlink(dst)
	if err != nil {
		// EINVAL: something other than a symlink is there.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EINVAL) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("link target %s: %w", rel, err)
	}
	return s.targetID(filepath.Dir(dst), target), true, nil
}

// targetID returns the id that a link in linkDir with the given target points to, or "" when it
// does not point to a by-id directory of this store. Absolute targets are accepted too.
func (s *Store) targetID(linkDir, target string) string {
	abs := filepath.Clean(target)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(linkDir, target)
	}
	if filepath.Dir(abs) != s.byID {
		return ""
	}
	id := filepath.Base(abs)
	if !ValidID(id) {
		return ""
	}
	return id
}
