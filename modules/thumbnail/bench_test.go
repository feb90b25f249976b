package thumbnail

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/rssprobe"
)

// childEnv makes the test binary a thumbnailer over the files named in it (see TestMain): the
// benchmark measures the module's peak RSS in a process of its own.
const childEnv = "THUMBNAIL_BENCH_CHILD"

func TestMain(m *testing.M) {
	rssprobe.Serve(childEnv, func(files []string) error {
		mod := New(Config{})
		for i, f := range files {
			if _, err := mod.Make(context.Background(), f, filepath.Join(os.TempDir(), fmt.Sprintf("thumbnail-rss-%d-%d", os.Getpid(), i))); err != nil {
				return err
			}
		}
		return nil
	})
	os.Exit(m.Run())
}

// BenchmarkThumbnails12MP: thumbnails per second over photo-like 12-megapixel JPEGs (4000×3000,
// quality 90), the module (preview and small) against vipsthumbnail (one 1280 px preview, its
// default threads) on the same files in the same run, and the module's peak RSS over them in
// a process of its own.
func BenchmarkThumbnails12MP(b *testing.B) {
	const n = 6
	dir := b.TempDir()
	var files []string
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("photo%02d.jpg", i))
		if err := os.WriteFile(p, encodeJPEG(b, photoLike(4000, 3000, uint32(i+1)), 90), 0o644); err != nil {
			b.Fatal(err)
		}
		files = append(files, p)
	}
	m := New(Config{})
	out := b.TempDir()
	var mod, vips time.Duration
	var bytesSmall, bytesPreview int
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		for i, f := range files {
			rec, err := m.Make(context.Background(), f, filepath.Join(out, fmt.Sprint(i)))
			if err != nil {
				b.Fatal(err)
			}
			bytesSmall, bytesPreview = rec.Small.Bytes, rec.Preview.Bytes
		}
		mod += time.Since(start)
		start = time.Now()
		args := append([]string{"--size", "1280", "-o", filepath.Join(out, "vips-%s.jpg[Q=82]")}, files...)
		if o, err := exec.Command("vipsthumbnail", args...).CombinedOutput(); err != nil {
			b.Fatalf("vipsthumbnail: %v\n%s", err, o)
		}
		vips += time.Since(start)
	}
	b.StopTimer()
	modRate := float64(n*b.N) / mod.Seconds()
	vipsRate := float64(n*b.N) / vips.Seconds()
	b.ReportMetric(modRate, "module-thumbs/s")
	b.ReportMetric(vipsRate, "vips-thumbs/s")
	b.ReportMetric(modRate/vipsRate, "ratio")
	b.ReportMetric(float64(bytesPreview)/1024, "preview-KB")
	b.ReportMetric(float64(bytesSmall)/1024, "small-KB")
	b.ReportMetric(float64(rssprobe.PeakKB(b, childEnv, files))/1024, "peak-RSS-MB")
}
