package metadata

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/homeindex/homeindex/internal/durable"
	"golang.org/x/sys/unix"
)

const (
	dirPerm  = 0o755
	filePerm = 0o644 // modules in other containers, under other uids, read what we write
)

// writeAtomic writes data to dir/name through a temp file in the store's .tmp directory: write,
// fsync, rename, fsync dir (or through a spare there: writeAtomicIn). It returns false without
// writing when dir/name already holds data (a regular file, not a link to one).
// Temp files live in one directory (not beside the target) so CleanTemp costs O(leftovers),
// not a walk of by-id, and modules listing their own directories never see them. (A temp file
// beside document.json, renamed within its directory, was tried: on ext4 it made a module
// hop's daemon CPU about 20% higher, each create then dirtying another block group's inode
// table.)
func (s *Store) writeAtomic(dir, name string, data []byte) (bool, error) {
	return s.writeAtomicIn(dir, name, data, false, false)
}

// writeAtomicIn is writeAtomic; newDir says the caller has just created dir, so there is no
// old file to compare with. rewritten says a write that a crash loses before the next Flush
// is made again (a document: the outbox applies its round again), so it may take a spare's
// inode (durable.Spares) even with syncs deferred: written over in place and not synced, the
// spare's blocks may hold their old bytes after a power cut, until that second write.
func (s *Store) writeAtomicIn(dir, name string, data []byte, newDir, rewritten bool) (bool, error) {
	dst := under(dir, name)
	if newDir && !s.noTmpfile.Load() {
		// Nothing to replace in a directory just made: the file is created whole in place.
		err := durable.CreateFile(dst, data, filePerm, !s.deferSync)
		if err == nil {
			return true, s.syncDir(dir)
		}
		if errors.Is(err, errors.ErrUnsupported) {
			s.noTmpfile.Store(true)
		}
		// Made meanwhile, no O_TMPFILE here, or any other failure: written the usual way,
		// which reports what is really wrong, so this path adds no way to fail.
	}
	var err error
	switch old := lstatOld(dst, newDir); {
	case old.same(dst, data):
		return false, nil
	case old.plain() && (rewritten || !s.deferSync):
		// A regular file of one link, the usual old document: an inode is reused, none made.
		err = s.spares.Replace(dst, data, filePerm, !s.deferSync)
	default:
		// Nothing there, or a symlink, a directory, a file linked elsewhere too: replaced by a
		// new file, as a rename replaces the name and never writes into what it names.
		err = durable.ReplaceFile(s.tmpDir(), name+".*", dst, data, filePerm, !s.deferSync)
	}
	if err != nil {
		return false, err
	}
	return true, s.syncDir(dir)
}

// oldFile is what an atomic write found at its destination (lstat).
type oldFile struct{ fi fs.FileInfo }

// lstatOld lstats dst, unless it is in a directory just made.
func lstatOld(dst string, newDir bool) oldFile {
	if newDir {
		return oldFile{}
	}
	fi, err := os.Lstat(dst)
	if err != nil {
		return oldFile{}
	}
	return oldFile{fi}
}

// same reports whether the file at path is a regular file holding exactly data. The size
// tells most changes apart without opening the file.
func (o oldFile) same(path string, data []byte) bool {
	if o.fi == nil || !o.fi.Mode().IsRegular() || o.fi.Size() != int64(len(data)) {
		return false
	}
	old, err := os.ReadFile(path)
	return err == nil && bytes.Equal(old, data)
}

// plain reports whether the file is a regular file with no other name.
func (o oldFile) plain() bool {
	if o.fi == nil || !o.fi.Mode().IsRegular() {
		return false
	}
	st, ok := o.fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 1
}

// tempName returns an unused-looking name in the .tmp directory, for symlinks, which have no
// CreateTemp.
func (s *Store) tempName(prefix string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return filepath.Join(s.tmpDir(), prefix+"."+hex.EncodeToString(b[:])), nil
}

// ensureDir creates dir (whose parent must exist) unless it is already a real directory, and
// fsyncs the parent when it created it, so a new entry survives a crash. A symlink or a file in
// its place is an error: following it could write outside the root. created reports whether
// this call made the directory.
//
// It looks before it creates: a document's directory nearly always exists after its first
// write (every module hop rewrites document.json), and an lstat takes no lock, where a mkdir
// that finds the name takes the parent's (by-id/, shared by every document) to fail. But once a
// call has created its directory, the next ones mkdir first, until one finds its directory
// there: a first sync makes a directory per document, and there the lstat of a name not yet
// in by-id/ is a lookup through the directory's index that the mkdir repeats (on ext4, with
// four writers, a first sync's document writes took a quarter longer with it).
func (s *Store) ensureDir(dir string) (created bool, err error) {
	if s.mkdirFirst.Load() {
		if err := os.Mkdir(dir, dirPerm); err == nil {
			return true, s.syncParent(dir)
		} else if !errors.Is(err, fs.ErrExist) {
			return false, err
		}
		s.mkdirFirst.Store(false)
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		err = os.Mkdir(dir, dirPerm)
		if err == nil {
			s.mkdirFirst.Store(true)
			return true, s.syncParent(dir)
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, err
		}
		fi, err = os.Lstat(dir) // made meanwhile
	}
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("%s: not a directory", dir)
	}
	return false, nil
}

// syncDir fsyncs a directory so a rename or a new entry in it is durable (durable.SyncDir),
// unless syncs are deferred to a later file-system-wide sync.
func (s *Store) syncDir(dir string) error {
	if s.deferSync {
		return nil
	}
	return durable.SyncDir(dir)
}

// syncParent is syncDir of dir's parent, which it does not compute when syncs are deferred.
func (s *Store) syncParent(dir string) error {
	if s.deferSync {
		return nil
	}
	return durable.SyncDir(filepath.Dir(dir))
}

// CleanTemp removes temp files that a crash left behind. Call it at start, before any write:
// it removes every entry of the .tmp directory, including those of writes in progress.
func (s *Store) CleanTemp() error {
	entries, err := os.ReadDir(s.tmpDir())
	if err != nil {
		return fmt.Errorf("clean temp: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(s.tmpDir(), e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("clean temp: %w", err)
	}
	return nil
}

// DeferSync switches the store to batched durability: writes and links skip their own fsyncs,
// and Flush makes everything written so far durable with one syncfs. The outbox uses it: it
// calls Flush before it records a round as applied, so a crash before the Flush only means the
// round is applied again (identical bytes are skipped, a torn file is rewritten).
func (s *Store) DeferSync() { s.deferSync = true }

// Flush makes every write so far durable (syncfs of the metadata directory's file system).
func (s *Store) Flush() error {
	if !s.deferSync {
		return nil
	}
	d, err := os.Open(s.root)
	if err != nil {
		return fmt.Errorf("flush metadata directory: %w", err)
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return fmt.Errorf("flush metadata directory: %w", err)
	}
	return nil
}
