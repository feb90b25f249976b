package durable

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/homeindex/homeindex/internal/testutil/proccpu"
)

// BenchmarkReplace2KB replaces 2.5 KB files, as a module hop replaces a document.json, from
// four goroutines: by temp file and rename (ReplaceFile), and by a spare's inode (Spares), in
// the same run. Run it with TMPDIR on the disk to measure: on ext4 without a journal the first
// frees an inode per replace, and every allocation after it pays for the inodes freed in the
// minutes before (docs/decisions.md, "A replaced document takes a spare's inode").
func BenchmarkReplace2KB(b *testing.B) {
	data := make([]byte, 2500)
	for i := range data {
		data[i] = 'a' + byte(i%26)
	}
	for _, way := range []string{"rename", "spares"} {
		b.Run(way, func(b *testing.B) {
			dir, tmp := b.TempDir(), b.TempDir()
			files := make([]string, 1000)
			for i := range files {
				files[i] = filepath.Join(dir, strconv.Itoa(i)+".json")
				if err := os.WriteFile(files[i], data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			s := NewSpares(tmp, "spare.*")
			var next atomic.Int64
			cpu := proccpu.Used()
			b.SetParallelism(2) // four goroutines on the two cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					dst := files[next.Add(1)%int64(len(files))]
					var err error
					if way == "rename" {
						err = ReplaceFile(tmp, "document.json.*", dst, data, 0o644, false)
					} else {
						err = s.Replace(dst, data, 0o644, false)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64((proccpu.Used()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
