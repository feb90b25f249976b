package media

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkPhotosVsExiftool reads 1,000 tagged JPEGs (10 photos of 1600×1200 tagged by
// exiftool, 100 copies each) with the module, one file after another as one worker does, and
// with `exiftool -fast -json` over the same files in one process (its best case: one start for
// all files), in the same run. It reports photos/s for both and their ratio (goal: > 1).
func BenchmarkPhotosVsExiftool(b *testing.B) {
	dir := b.TempDir()
	var files []string
	for i := range 10 {
		src := filepath.Join(dir, fmt.Sprintf("src%d.jpg", i))
		plainJPEG(b, src, 1600, 1200)
		exiftool(b, src, append(cameraTags, fmt.Sprintf("-DateTimeOriginal=2019:07:%02d 12:00:00", i+1))...)
		data, err := os.ReadFile(src)
		if err != nil {
			b.Fatal(err)
		}
		for j := range 100 {
			p := filepath.Join(dir, fmt.Sprintf("p%d-%03d.jpg", i, j))
			if err := os.WriteFile(p, data, 0o644); err != nil {
				b.Fatal(err)
			}
			files = append(files, p)
		}
	}
	mod := New(Config{})
	ctx := context.Background()
	var moduleTime, exiftoolTime time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		for _, p := range files {
			info, err := mod.Extract(ctx, p, KindPhoto)
			if err != nil || info.CameraModel == "" {
				b.Fatalf("%s: %v", p, err)
			}
		}
		moduleTime += time.Since(start)
		start = time.Now()
		cmd := exec.Command("exiftool", append([]string{"-fast", "-json", "-Make", "-Model", "-LensModel", "-DateTimeOriginal",
			"-OffsetTimeOriginal", "-GPSLatitude", "-GPSLongitude", "-ImageWidth", "-ImageHeight", "-Orientation", "-n"}, files...)...)
		if out, err := cmd.Output(); err != nil || len(out) < len(files)*50 {
			b.Fatalf("exiftool: %v (%d bytes)", err, len(out))
		}
		exiftoolTime += time.Since(start)
	}
	n := float64(len(files) * b.N)
	mps, eps := n/moduleTime.Seconds(), n/exiftoolTime.Seconds()
	b.ReportMetric(mps, "photos/s")
	b.ReportMetric(eps, "exiftool-photos/s")
	b.ReportMetric(mps/eps, "ratio")
}
