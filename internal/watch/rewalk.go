package watch

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"time"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/sys/unix"
)

// rewalk reads every unwatched subtree again and compares each directory's digest (names,
// types, sizes, mtimes and inodes of its entries) with the previous pass. It returns how many
// directories appeared, vanished or changed; the first pass only records the baseline.
func (w *Watcher) rewalk() int {
	w.mu.Lock()
	roots := make([]string, 0, len(w.unwatched))
	for p := range w.unwatched {
		roots = append(roots, p)
	}
	baseline := w.rewalks.Load() == 0
	w.mu.Unlock()
	if len(roots) == 0 {
		return 0
	}
	start := time.Now()
	seen := make(map[string]uint64, len(w.digests))
	d := digester{skip: w.cfg.Skip, out: seen}
	for _, r := range roots {
		d.tree(r)
	}
	w.mu.Lock()
	changed := 0
	for p, sum := range seen {
		if old, ok := w.digests[p]; !ok || old != sum {
			changed++
		}
	}
	for p := range w.digests {
		if _, ok := seen[p]; !ok {
			changed++
		}
	}
	w.digests = seen
	w.mu.Unlock()
	w.rewalks.Add(1)
	w.lastRewalk.Store(int64(time.Since(start)))
	if baseline {
		return 0
	}
	return changed
}

// digester computes directory digests below a root.
type digester struct {
	skip func(string) bool
	out  map[string]uint64
	h    xxhash.Digest
	buf  [32]byte
}

// tree digests dir and every directory below it that is not skipped. Unreadable directories
// get no digest (their appearance or loss is still a change).
func (d *digester) tree(dir string) {
	sum, subdirs, ok := d.dir(dir)
	if !ok {
		return
	}
	d.out[dir] = sum
	for _, s := range subdirs {
		d.tree(s)
	}
}

// dir digests one directory: the sum of one hash per entry, so the order of entries does not
// matter. Entries are stat'ed relative to the open directory (no path lookup per file).
func (d *digester) dir(dir string) (sum uint64, subdirs []string, ok bool) {
	f, err := os.Open(dir)
	if err != nil {
		return 0, nil, false
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, nil, false
	}
	fd := int(f.Fd())
	var st unix.Stat_t
	for _, name := range names {
		p := dir + string(filepath.Separator) + name
		if d.skip(p) {
			continue
		}
		if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue // vanished meanwhile: the next pass sees it gone
		}
		d.h.Reset()
		_, _ = d.h.WriteString(name)
		binary.LittleEndian.PutUint64(d.buf[0:], uint64(st.Size))
		binary.LittleEndian.PutUint64(d.buf[8:], uint64(st.Mtim.Nano()))
		binary.LittleEndian.PutUint64(d.buf[16:], st.Ino)
		binary.LittleEndian.PutUint64(d.buf[24:], uint64(st.Mode))
		_, _ = d.h.Write(d.buf[:])
		sum += d.h.Sum64()
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			subdirs = append(subdirs, p)
		}
	}
	return sum, subdirs, true
}
