package durable

import (
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Spares replaces files without making or freeing an inode: the new content is written into a
// spare file of its directory, which is then exchanged with the file it replaces
// (renameat2(RENAME_EXCHANGE)), so the spare's name now holds the old content's inode, and that
// inode is the spare of a later replace. A reader sees the old content or the new, as with
// ReplaceFile, and a reader that opened the old file before the exchange keeps reading it
// whole: a spare is written again only when nothing else has it open, which a write lease
// tells (F_SETLEASE is granted only to the file's one opener).
//
// Why: every module hop replaces a document.json. Creating a temp file and renaming it over
// the old one allocates an inode and frees one per hop. On ext4 without a journal, each
// allocation then steps over every inode freed in the last minute or more (the kernel's
// recently_deleted check, one buffer lookup each), so a hop's cost grew with the hops before
// it: 300-550 µs of CPU per replace against 17-22 here on such a disk; on journaled ext4
// 78-110 against 27, on tmpfs 24-26 against 10-14 (4 writers, 2.5 KB files).
//
// Where the file system has no RENAME_EXCHANGE or no leases (NFS, leases disabled), found by
// a probe at the first Replace or by a call that fails, Replace is ReplaceFile from then on.
type Spares struct {
	dir     string
	pattern string
	uid     int // the effective uid, which owns a spare this process may write

	probed sync.Once
	mu     sync.Mutex
	free   []string // spare names in dir, oldest first: reused first, so readers had longest
	off    atomic.Bool
}

// maxSpares bounds the spares kept: about one per concurrent writer is used.
const maxSpares = 64

// NewSpares returns the spares of dir (where the replaced files' file system is), named by
// pattern as os.CreateTemp names files. dir's spares are temp files: remove them with the
// rest of dir's leftovers at start; a spare found missing is made again.
func NewSpares(dir, pattern string) *Spares {
	return &Spares{dir: dir, pattern: TempPattern(pattern), uid: os.Geteuid()}
}

// Replace writes data to dst as ReplaceFile does (dst replaced whole, fsynced first when sync
// is set; the caller syncs dst's directory). dst should be a regular file of one link: the
// caller knows from the lstat that told it dst's content differs. If dst is gone meanwhile, the
// spare is renamed into its place.
//
// Unlike ReplaceFile's new file, the spare's blocks are written over: without sync, a power
// cut before the data reaches the disk may leave dst with the spare's old bytes (a kill -9 may
// not: the page cache holds the new ones). A caller that does not sync must write dst again
// after such a crash, as the outbox does any round not yet flushed.
func (s *Spares) Replace(dst string, data []byte, perm os.FileMode, sync bool) error {
	s.probed.Do(s.probe)
	if s.off.Load() {
		return ReplaceFile(s.dir, s.pattern, dst, data, perm, sync)
	}
	name, fd, size, err := s.take(perm)
	if err != nil {
		return &fs.PathError{Op: "replace", Path: dst, Err: err}
	}
	// The old content is written over, then cut to length: blocks already allocated are
	// reused, where emptying the file first would free them and allocate them again (and on a
	// file system mounted with discard, send the device a discard for each).
	err = writeAll(fd, data)
	if err == nil && size > int64(len(data)) {
		err = unix.Ftruncate(fd, int64(len(data)))
	}
	if err == nil && sync {
		err = unix.Fsync(fd)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat2(unix.AT_FDCWD, name, unix.AT_FDCWD, dst, unix.RENAME_EXCHANGE)
		switch err {
		case nil:
			s.put(name) // it holds dst's old content now
			return nil
		case unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP:
			s.off.Store(true) // no exchange on this file system
			err = unix.Rename(name, dst)
		case unix.ENOENT:
			err = unix.Rename(name, dst) // dst removed meanwhile: the spare takes its place
		}
	}
	if err != nil {
		_ = unix.Unlink(name)
		return &fs.PathError{Op: "replace", Path: dst, Err: err}
	}
	return nil
}

// probe turns the spares off unless dir's file system grants a write lease on a file nobody
// else knows of and exchanges two files. A file system that refuses every lease (as some
// overlay and network file systems do) would otherwise make every spare look held by a reader,
// and each replace pay for a spare let go and a new one made.
func (s *Spares) probe() {
	a, fd, err := createTemp(s.dir, s.pattern, 0o600)
	if err != nil {
		return // the replace that follows reports what is wrong with dir
	}
	defer func() { _ = unix.Unlink(a) }()
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_WRLCK)
	_ = unix.Close(fd) // releases the lease
	if err != nil {
		s.off.Store(true)
		return
	}
	b, fd, err := createTemp(s.dir, s.pattern, 0o600)
	if err != nil {
		return
	}
	defer func() { _ = unix.Unlink(b) }()
	_ = unix.Close(fd)
	if unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE) != nil {
		s.off.Store(true)
	}
}

// take returns a spare opened for writing at its start, with mode perm, and its size: a free
// one that nothing else has open, or a new one.
func (s *Spares) take(perm os.FileMode) (name string, fd int, size int64, err error) {
	for {
		s.mu.Lock()
		if len(s.free) == 0 {
			s.mu.Unlock()
			break
		}
		name = s.free[0]
		s.free = s.free[1:]
		s.mu.Unlock()
		if fd, size, ok := s.reuse(name, perm); ok {
			return name, fd, size, nil
		}
		_ = unix.Unlink(name) // someone reads it, or it is not ours to write: let it go
		if s.off.Load() {
			break
		}
	}
	name, fd, err = createTemp(s.dir, s.pattern, perm)
	if err == nil && umask()&perm != 0 {
		if err = unix.Fchmod(fd, uint32(perm)); err != nil {
			_ = unix.Close(fd)
			_ = unix.Unlink(name)
		}
	}
	return name, fd, 0, err
}

// reuse opens the spare name for writing, if it is a regular file of one link owned by this
// process's user and nothing else has it open (a write lease is granted), and returns its
// size; its mode is set to perm.
func (s *Spares) reuse(name string, perm os.FileMode) (fd int, size int64, ok bool) {
	fd, err := unix.Open(name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, 0, false
	}
	var st unix.Stat_t
	ok = unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink == 1 &&
		int(st.Uid) == s.uid
	if ok {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_WRLCK)
		if err == unix.EINVAL || err == unix.ENOSYS {
			s.off.Store(true) // no leases here (NFS, fs.leases-enable=0): no proof nobody reads
		}
		ok = err == nil
		if ok {
			_, err = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
			ok = err == nil
		}
	}
	if ok && os.FileMode(st.Mode&0o777) != perm&os.ModePerm {
		ok = unix.Fchmod(fd, uint32(perm)) == nil
	}
	if !ok {
		_ = unix.Close(fd)
		return -1, 0, false
	}
	return fd, st.Size, true
}

// put keeps name as a free spare, or removes it when enough are kept or spares are off.
func (s *Spares) put(name string) {
	s.mu.Lock()
	if len(s.free) < maxSpares && !s.off.Load() {
		s.free = append(s.free, name)
		name = ""
	}
	s.mu.Unlock()
	if name != "" {
		_ = unix.Unlink(name)
	}
}
