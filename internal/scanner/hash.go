package scanner

import (
	"context"
	"encoding/hex"
	"errors"
	"io/fs"
	"sync"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/sys/unix"
)

// ErrChanged means the file's size or mtime changed while it was being hashed; the id would
// not describe any version of it. Retry on a later pass.
var ErrChanged = errors.New("file changed while hashed")

// ErrNotRegular means the path (after following symlinks) is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// hashBufSize is the read size: as fast as 1 MiB on cached files and faster than 32 KiB or
// 4 MiB (BenchmarkHashBufSize), at a quarter of the memory per worker.
const hashBufSize = 256 << 10

var hashBufs = sync.Pool{New: func() any { b := make([]byte, hashBufSize); return &b }}

// HashFile streams the whole file through xxh64 (seed 0) and returns the id: 16 lowercase hex
// digits, canonical big-endian (same as Python xxhash.xxh64().hexdigest()). Symlinks are
// followed. It also returns the fstat of the opened file, taken before reading, so the caller
// can detect a file that changed between its walk and the hash; st is set whenever the file
// could be opened, errors included. A change during the read (size, mtime or the number of
// bytes read differs from that stat) returns ErrChanged; a non-regular file ErrNotRegular.
func HashFile(path string) (id string, st FileStat, err error) {
	id, st, _, err = hashFileHead(context.Background(), path, nil)
	return id, st, err
}

// hashFileHead is HashFile that also copies the file's first len(head) bytes (all of a
// shorter file) into head, and says how many: what DetectType would read, taken from the
// same read as the hash.
func hashFileHead(ctx context.Context, path string, head []byte) (string, FileStat, int, error) {
	bp := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(bp)
	return hashPath(ctx, path, *bp, true, head)
}

// hashPath is hashFileHead with the read buffer and the readahead advice as parameters, so that
// benchmarks can compare them.
func hashPath(ctx context.Context, path string, buf []byte, sequential bool, head []byte) (string, FileStat, int, error) {
	fd, err := openRead(path)
	if err != nil {
		return "", FileStat{}, 0, err
	}
	defer unix.Close(fd)

	var before unix.Stat_t
	if err := unix.Fstat(fd, &before); err != nil {
		return "", FileStat{}, 0, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	st := fileStatOf(&before)
	if !isRegular(&before) {
		return "", st, 0, &fs.PathError{Op: "hash", Path: path, Err: ErrNotRegular}
	}
	if sequential && st.Size > int64(len(buf)) {
		// Doubles the readahead window on a cold file; harmless when cached. Advisory only. A
		// file one read takes whole gains nothing from it: a small file is spared the call.
		_ = unix.Fadvise(fd, 0, 0, unix.FADV_SEQUENTIAL)
	}

	var d xxhash.Digest
	d.Reset()
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return "", st, 0, err
		}
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", st, 0, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			break
		}
		d.Write(buf[:n])
		if total < int64(len(head)) {
			copy(head[total:], buf[:n])
		}
		total += int64(n)
		if st.Size > 0 && total >= st.Size {
			// All the stat promised: the read that would return end of file is spared, and
			// bytes appended since show in the second stat. (A size of 0 is read to its end:
			// files of /proc and /sys say 0 and have content.)
			break
		}
	}

	var after unix.Stat_t
	if err := unix.Fstat(fd, &after); err != nil {
		return "", st, 0, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if a := fileStatOf(&after); a.Size != st.Size || a.MtimeNs != st.MtimeNs || total != st.Size {
		return "", st, 0, &fs.PathError{Op: "hash", Path: path, Err: ErrChanged}
	}
	return formatID(d.Sum64()), st, int(min(total, int64(len(head)))), nil
}

// formatID renders a hash as xxhash's hexdigest: 16 lowercase hex digits, big-endian.
func formatID(sum uint64) string {
	var b [8]byte
	for i := range b {
		b[i] = byte(sum >> (56 - 8*i))
	}
	return hex.EncodeToString(b[:])
}

// openRead opens path for reading, following symlinks. O_NONBLOCK keeps a FIFO from blocking
// the open (regular files ignore it); O_NOATIME avoids an inode write per file read, where the
// kernel allows it (owner or CAP_FOWNER).
func openRead(path string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK
	for {
		fd, err := unix.Open(path, flags|unix.O_NOATIME, 0)
		if err == unix.EPERM {
			fd, err = unix.Open(path, flags, 0)
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}
