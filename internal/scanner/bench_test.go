package scanner

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// Fixtures are big, so each is built at most once per process (only when a benchmark needs it)
// and removed by TestMain.
var (
	benchRoot    string
	benchRootErr error
	benchRootMu  sync.Mutex

	treeOnce  sync.Once
	hashOnce  sync.Once
	hashFiles []string
)

func benchDir(b *testing.B, name string) string {
	b.Helper()
	benchRootMu.Lock()
	defer benchRootMu.Unlock()
	if benchRoot == "" && benchRootErr == nil {
		benchRoot, benchRootErr = os.MkdirTemp("", "scanner-bench-")
	}
	if benchRootErr != nil {
		b.Fatal(benchRootErr)
	}
	return filepath.Join(benchRoot, name)
}

func removeBenchFixtures() {
	benchRootMu.Lock()
	defer benchRootMu.Unlock()
	if benchRoot != "" {
		_ = os.RemoveAll(benchRoot)
	}
}

const (
	treeDirs     = 100
	treeFilesDir = 1000
)

// tree100k returns a directory of 100 dirs × 1000 small files.
func tree100k(b *testing.B) string {
	root := benchDir(b, "tree")
	treeOnce.Do(func() {
		content := []byte("small file\n")
		for d := range treeDirs {
			dir := filepath.Join(root, fmt.Sprintf("dir%03d", d))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			for f := range treeFilesDir {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%04d.txt", f)), content, 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	return root
}

func BenchmarkWalk100k(b *testing.B) {
	root := tree100k(b)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := Walk(context.Background(), root, WalkOptions{}, func(Entry) error { n++; return nil })
		if err != nil || n != treeDirs*treeFilesDir {
			b.Fatalf("Walk: %d files, %v", n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*treeDirs*treeFilesDir), "ns/file")
}

func BenchmarkBareWalkDirLstat100k(b *testing.B) {
	root := tree100k(b)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			if _, err := os.Lstat(p); err != nil {
				return err
			}
			n++
			return nil
		})
		if err != nil || n != treeDirs*treeFilesDir {
			b.Fatalf("WalkDir: %d files, %v", n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*treeDirs*treeFilesDir), "ns/file")
}

const (
	hashFileCount = 20
	hashFileSize  = 50 << 20
)

// bigFiles returns 20 files of 50 MiB each, written and synced (so they can be evicted from
// the page cache with FADV_DONTNEED). Right after creation they are in the page cache.
func bigFiles(b *testing.B) []string {
	dir := benchDir(b, "big")
	hashOnce.Do(func() {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		data := make([]byte, hashFileSize)
		_, _ = rand.NewChaCha8([32]byte{7}).Read(data)
		for i := range hashFileCount {
			data[0] = byte(i) // distinct ids
			p := filepath.Join(dir, fmt.Sprintf("big%02d", i))
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Write(data); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
			hashFiles = append(hashFiles, p)
		}
	})
	return hashFiles
}

// BenchmarkHash hashes 20 × 50 MiB files, all in the page cache (each b.Loop pass rereads
// the same files), with the Hasher and, for comparison, with a plain read loop.
func BenchmarkHash(b *testing.B) {
	files := bigFiles(b)
	total := int64(len(files)) * hashFileSize

	hasher := func(workers int) func(*testing.B) {
		return func(b *testing.B) {
			b.SetBytes(total)
			for b.Loop() {
				jobs := make(chan HashJob)
				out := make(chan HashResult)
				go Hasher{Workers: workers}.Run(context.Background(), jobs, out)
				go func() {
					defer close(jobs)
					for _, p := range files {
						jobs <- HashJob{Path: p}
					}
				}()
				for r := range out {
					if r.Err != nil {
						b.Fatal(r.Err)
					}
				}
			}
		}
	}
	b.Run("Hasher", hasher(0))
	b.Run("Hasher1", hasher(1))
	// cat > /dev/null: one file after another, 128 KiB reads (coreutils' buffer size).
	b.Run("ReadDiscard", func(b *testing.B) {
		b.SetBytes(total)
		buf := make([]byte, 128<<10)
		for b.Loop() {
			for _, p := range files {
				readDiscard(b, p, buf)
			}
		}
	})
}

func readDiscard(b *testing.B, path string, buf []byte) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkHashBufSize picks hashBufSize: one cached 50 MiB file per op, one goroutine.
func BenchmarkHashBufSize(b *testing.B) {
	file := bigFiles(b)[0]
	for _, size := range []int{32 << 10, 128 << 10, 256 << 10, 1 << 20, 4 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			buf := make([]byte, size)
			b.SetBytes(hashFileSize)
			for b.Loop() {
				if _, _, _, err := hashPath(context.Background(), file, buf, true, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHashCold measures FADV_SEQUENTIAL on files evicted from the page cache before each
// pass (FADV_DONTNEED on our own files only; nothing system-wide is dropped).
func BenchmarkHashCold(b *testing.B) {
	files := bigFiles(b)[:4]
	for _, seq := range []bool{false, true} {
		b.Run(fmt.Sprintf("sequential=%v", seq), func(b *testing.B) {
			buf := make([]byte, hashBufSize)
			b.SetBytes(int64(len(files)) * hashFileSize)
			for b.Loop() {
				b.StopTimer()
				for _, p := range files {
					evict(b, p)
				}
				b.StartTimer()
				for _, p := range files {
					if _, _, _, err := hashPath(context.Background(), p, buf, seq, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func evict(b *testing.B, path string) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		b.Fatal(err)
	}
}
