package scanner

import "golang.org/x/sys/unix"

// FileStat is the identity of a file's content as far as the hash cache is concerned.
type FileStat struct {
	Dev, Ino uint64
	Size     int64
	MtimeNs  int64
}

func fileStatOf(st *unix.Stat_t) FileStat {
	return FileStat{
		Dev:     uint64(st.Dev),
		Ino:     uint64(st.Ino),
		Size:    int64(st.Size),
		MtimeNs: int64(st.Mtim.Sec)*1e9 + int64(st.Mtim.Nsec),
	}
}

func isRegular(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFREG }
