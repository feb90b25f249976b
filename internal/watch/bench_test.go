package watch

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/homeindex/homeindex/internal/testutil/proccpu"
)

// The benchmark tree: 100,000 small files in 1,000 directories (10 × 100, two levels below the
// root), made once per process in a temporary directory that TestMain removes.
const (
	benchTop, benchSub, benchFiles = 10, 100, 100
)

var (
	benchOnce sync.Once
	benchRoot string
	benchErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchRoot != "" {
		os.RemoveAll(filepath.Dir(benchRoot))
	}
	os.Exit(code)
}

func benchTree(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "watch-bench-")
		if err != nil {
			benchErr = err
			return
		}
		benchRoot = filepath.Join(dir, "files")
		for i := range benchTop {
			for j := range benchSub {
				d := filepath.Join(benchRoot, fmt.Sprintf("t%02d", i), fmt.Sprintf("s%03d", j))
				if benchErr = os.MkdirAll(d, 0o755); benchErr != nil {
					return
				}
				for k := range benchFiles {
					p := filepath.Join(d, fmt.Sprintf("f%03d.txt", k))
					if benchErr = os.WriteFile(p, []byte("small file"), 0o644); benchErr != nil {
						return
					}
				}
			}
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchRoot
}

// BenchmarkPlace100k: watches placed over the 100k-file tree and the time to place them.
func BenchmarkPlace100k(b *testing.B) {
	root := benchTree(b)
	var watches int
	for b.Loop() {
		w := New(Config{Roots: []string{root}, Budget: 1 << 20})
		fw, err := fsnotify.NewWatcher()
		if err != nil {
			b.Fatal(err)
		}
		w.fw = fw
		w.place(root)
		watches = len(w.watched)
		b.StopTimer()
		fw.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(watches), "watches")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/place")
}

// BenchmarkEvents1000: CPU the watcher spends per 1,000 file events (a touch of 1,000 files
// spread over the tree), measured as the process's CPU with the watcher running minus the
// same touches with no watcher, in the same run.
func BenchmarkEvents1000(b *testing.B) {
	root := benchTree(b)
	var files []string
	for i := range 1000 {
		files = append(files, filepath.Join(root, fmt.Sprintf("t%02d", i%benchTop), fmt.Sprintf("s%03d", i%benchSub), fmt.Sprintf("f%03d.txt", i%benchFiles)))
	}
	touch := func(round int) {
		at := time.Unix(1_000_000+int64(round), 0)
		for _, f := range files {
			if err := os.Chtimes(f, at, at); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Reference: the touches alone.
	c0 := proccpu.Used()
	for i := range 5 {
		touch(i)
	}
	bare := (proccpu.Used() - c0) / 5

	w := New(Config{Roots: []string{root}, Budget: 1 << 20, Settle: time.Hour, MaxDelay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	for w.Status().Mode == "starting" {
		time.Sleep(10 * time.Millisecond) // polling placement, not synchronisation
	}
	var total time.Duration
	round := 10
	for b.Loop() {
		before := w.Status().Events
		c := proccpu.Used()
		touch(round)
		round++
		for w.Status().Events < before+int64(len(files)) {
			time.Sleep(time.Millisecond) // polling the counter
		}
		total += proccpu.Used() - c
	}
	cancel()
	<-done
	perPass := total / time.Duration(b.N)
	b.ReportMetric(float64((perPass-bare).Microseconds())/1000, "watcher-cpu-ms/1k-events")
	b.ReportMetric(float64(bare.Microseconds())/1000, "touch-cpu-ms/1k")
}

// BenchmarkRewalk100k: one re-walk pass of the fallback over the unchanged 100k-file tree
// (nothing watched), with its CPU time; BenchmarkBareWalkDirLstat100k is the reference.
func BenchmarkRewalk100k(b *testing.B) {
	root := benchTree(b)
	w := New(Config{Roots: []string{root}, Budget: 0})
	w.place(root)
	w.mu.Lock()
	w.unwatched[root] = reasonBudget
	w.mu.Unlock()
	w.rewalk() // baseline
	c := proccpu.Used()
	for b.Loop() {
		if n := w.rewalk(); n != 0 {
			b.Fatalf("%d directories changed in an unchanged tree", n)
		}
	}
	b.ReportMetric(float64((proccpu.Used()-c).Microseconds())/1000/float64(b.N), "cpu-ms/pass")
	b.ReportMetric(float64(len(w.digests)), "dirs")
}

func BenchmarkBareWalkDirLstat100k(b *testing.B) {
	root := benchTree(b)
	c := proccpu.Used()
	for b.Loop() {
		n := 0
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if _, err := os.Lstat(p); err != nil {
				return err
			}
			n++
			return nil
		})
		if err != nil || n < benchTop*benchSub*benchFiles {
			b.Fatalf("WalkDir: %d entries, %v", n, err)
		}
	}
	b.ReportMetric(float64((proccpu.Used()-c).Microseconds())/1000/float64(b.N), "cpu-ms/pass")
}
