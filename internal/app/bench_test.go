package app

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// benchTree is a 100k-file tree (100 dirs × 1000 small files) made once per process. Its files
// are dated long ago, as a library's are: a file modified within SETTLE_TIME is left for a later
// sync, and a sync of a tree made just now would then record nothing.
var (
	benchOnce sync.Once
	benchRoot string
)

const benchFiles = 100_000

var benchFilesDate = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

func benchTree(b *testing.B) string {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "homeindex-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchRoot = filepath.Join(dir, "files")
		for i := 0; i < benchFiles; i++ {
			p := filepath.Join(benchRoot, fmt.Sprintf("d%03d", i/1000), fmt.Sprintf("f%06d.txt", i))
			if i%1000 == 0 {
				os.MkdirAll(filepath.Dir(p), 0o755)
			}
			if err := os.WriteFile(p, []byte(fmt.Sprintf("small file number %d\n", i)), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.Chtimes(p, benchFilesDate, benchFilesDate); err != nil {
				b.Fatal(err)
			}
		}
	})
	return benchRoot
}

// syncEnv is a testEnv over the shared bench tree with its own state and metadata.
func benchEnv(b *testing.B) *testEnv {
	root := benchTree(b)
	base := b.TempDir()
	e := &testEnv{t: b, ctx: b.Context(), root: root, meta: filepath.Join(base, "metadata"), state: filepath.Join(base, "state"),
		vars: map[string]string{"INDEX_DIRECTORY": root, "METADATA_DIRECTORY": filepath.Join(base, "metadata"),
			"STATE_DIRECTORY": filepath.Join(base, "state"), "LOG_FORMAT": "json"}}
	e.open()
	b.Cleanup(func() { e.close() })
	return e
}

// BenchmarkInitialSync100k: catalog, metadata directory and embedded index from nothing.
func BenchmarkInitialSync100k(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		e := benchEnv(b)
		b.StartTimer()
		st, err := e.app.SyncOnce(e.ctx, "bench")
		if err != nil || st.NewDocs != benchFiles || st.Unsettled != 0 {
			b.Fatalf("the sync did not record the tree: %+v %v", st, err)
		}
		if _, err := e.app.Outbox.Drain(e.ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		e.close()
		b.StartTimer()
	}
	b.ReportMetric(float64(benchFiles)/(b.Elapsed().Seconds()/float64(b.N)), "files/s")
}

// BenchmarkResyncUnchanged100k: a sync of the same tree with nothing changed.
func BenchmarkResyncUnchanged100k(b *testing.B) {
	e := benchEnv(b)
	if st, err := e.app.SyncOnce(e.ctx, "bench"); err != nil || st.NewDocs != benchFiles {
		b.Fatalf("the first sync did not record the tree: %+v %v", st, err)
	}
	if _, err := e.app.Outbox.Drain(e.ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		st, err := e.app.SyncOnce(e.ctx, "bench")
		if err != nil || st.Hashed != 0 || st.Unchanged != benchFiles {
			b.Fatalf("%+v %v", st, err)
		}
	}
}

// BenchmarkBareWalkDirLstat100k is the floor for an unchanged re-sync: filepath.WalkDir plus
// an Lstat of every file.
func BenchmarkBareWalkDirLstat100k(b *testing.B) {
	root := benchTree(b)
	for b.Loop() {
		n := 0
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				if _, err := os.Lstat(p); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil || n != benchFiles {
			b.Fatal(n, err)
		}
	}
}
