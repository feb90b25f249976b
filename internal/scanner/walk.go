package scanner

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// Entry is one regular file (or symlink to a regular file) found by Walk.
type Entry struct {
	Rel      string // slash-separated path relative to the root
	Dev, Ino uint64 // of the target for a symlinked file
	Size     int64
	MtimeNs  int64 // of the target for a symlinked file
	Symlink  bool
}

// Stat returns the entry's cache key fields as a FileStat, comparable with HashFile's.
func (e Entry) Stat() FileStat {
	return FileStat{Dev: e.Dev, Ino: e.Ino, Size: e.Size, MtimeNs: e.MtimeNs}
}

// WalkOptions tunes Walk. The zero value skips nothing and ignores per-path errors.
type WalkOptions struct {
	// Skip is called for every directory and file relative path (slash form); returning true
	// skips it (a skipped directory is not entered). Used for the metadata dir inside the tree
	// and for drive status markers. isDir is true only for real directories: a symlink is a
	// file here, whatever it points to. Skip is called before the entry is stat'ed.
	Skip func(rel string, isDir bool) bool
	// OnError receives per-path problems (broken symlink, permission denied, vanished file);
	// the walk continues. Errors are *fs.PathError with Path set to the relative path.
	OnError func(rel string, err error)
	// OnDir, when set, is called once for each directory read without error (the root is
	// ""), with the number of its entries that were not skipped. A sync uses it to tell an
	// emptied directory (a failed mount) from files that were deleted.
	OnDir func(rel string, entries int)
}

// Walk walks root and calls fn for each regular file and each symlink to a regular file.
//
// Symlinked directories are not followed; symlinked files are stat'ed through to their
// target. Broken symlinks, unreadable entries and entries vanishing mid-walk go to OnError and
// are skipped. Other file types (FIFOs, sockets, devices) are skipped silently.
//
// Order: fn sees entries in ascending byte order of Rel, globally (so "a-b" comes before
// "a/b", because '-' < '/'). Each directory is read whole and sorted with a directory's name
// compared as if it ended in '/'; a depth-first walk then yields globally sorted paths.
//
// Walk stops early, returning the error, if ctx is done or fn returns an error. A root that
// cannot be opened is an error too. The walk holds one open descriptor per directory level.
func Walk(ctx context.Context, root string, opt WalkOptions, fn func(Entry) error) error {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("walk: %w", &fs.PathError{Op: "open", Path: root, Err: err})
	}
	w := walker{done: ctx.Done(), ctx: ctx, opt: opt, fn: fn}
	return w.dir(fd, "")
}

type walker struct {
	done <-chan struct{}
	ctx  context.Context
	opt  WalkOptions
	fn   func(Entry) error
}

func (w *walker) skip(rel string, isDir bool) bool {
	return w.opt.Skip != nil && w.opt.Skip(rel, isDir)
}

func (w *walker) fail(op, rel string, err error) {
	if w.opt.OnError != nil {
		w.opt.OnError(rel, &fs.PathError{Op: op, Path: rel, Err: err})
	}
}

// dir walks the directory open as fd (whose path is rel) and closes fd.
func (w *walker) dir(fd int, rel string) error {
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	// Unsorted read: we sort once ourselves with the directory-aware order.
	ents, err := f.ReadDir(-1)
	if err != nil {
		w.fail("readdirent", rel, unwrapPathError(err))
		// Keep whatever was read before the error.
	}
	slices.SortFunc(ents, compareEntries)
	if err == nil && w.opt.OnDir != nil {
		n := 0
		for _, de := range ents {
			crel := de.Name()
			if rel != "" {
				crel = rel + "/" + crel
			}
			if !w.skip(crel, de.Type().IsDir()) {
				n++
			}
		}
		w.opt.OnDir(rel, n)
	}

	for _, de := range ents {
		select {
		case <-w.done:
			return w.ctx.Err()
		default:
		}
		name := de.Name()
		crel := name
		if rel != "" {
			crel = rel + "/" + name
		}
		typ := de.Type()
		switch {
		case typ.IsDir():
			if w.skip(crel, true) {
				continue
			}
			cfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				w.fail("open", crel, err)
				continue
			}
			if err := w.dir(cfd, crel); err != nil {
				return err
			}
		case typ.IsRegular(), typ&fs.ModeSymlink != 0:
			if w.skip(crel, false) {
				continue
			}
			if err := w.file(fd, name, crel, typ&fs.ModeSymlink != 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// file stats one non-directory entry and hands it to fn if it is (or points to) a regular file.
func (w *walker) file(dirfd int, name, rel string, symlink bool) error {
	var st unix.Stat_t
	if symlink {
		// Through to the target: ENOENT/ELOOP/ENOTDIR here mean a broken link.
		if err := unix.Fstatat(dirfd, name, &st, 0); err != nil {
			w.fail("stat", rel, err)
			return nil
		}
	} else if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		w.fail("lstat", rel, err)
		return nil
	}
	// Anything else (a link to a directory, or an entry replaced since ReadDir) is left for
	// the next walk.
	if !isRegular(&st) {
		return nil
	}
	s := fileStatOf(&st)
	return w.fn(Entry{Rel: rel, Dev: s.Dev, Ino: s.Ino, Size: s.Size, MtimeNs: s.MtimeNs, Symlink: symlink})
}

// compareEntries orders directory entries so that a depth-first walk yields paths in byte
// order: a directory's name sorts as name+"/".
func compareEntries(a, b fs.DirEntry) int {
	return compareNames(a.Name(), a.IsDir(), b.Name(), b.IsDir())
}

func compareNames(a string, aDir bool, b string, bDir bool) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) == len(b):
		return 0
	case len(a) < len(b):
		return -nextVsByte(aDir, b[n])
	default:
		return nextVsByte(bDir, a[n])
	}
}

// nextVsByte compares c with what follows a name that is a prefix of the other: '/' for a
// directory, nothing for a file. It returns the sign of (c - that). Names never contain '/'.
func nextVsByte(dir bool, c byte) int {
	if dir && c < '/' {
		return -1
	}
	return 1
}

// unwrapPathError strips os's PathError (which carries the descriptor's name) so fail can
// attach the relative path.
func unwrapPathError(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
