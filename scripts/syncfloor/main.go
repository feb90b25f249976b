// Command syncfloor is the floor an initial `homeindexd sync` is measured against
// (scripts/bench-sync.sh runs both over the same tree): it walks a tree, hashes every regular
// file (xxh64, seed 0) and writes by-id/<id>/document.json (mkdir, temp file, rename) with two
// goroutines. No catalog, no index, no by-path links, no fsync: only the work any sync must do.
// With -walk it is the floor of an unchanged re-sync instead: filepath.WalkDir and an Lstat of
// every file.
//
// Usage: syncfloor FILES_DIR OUT_DIR | syncfloor -walk FILES_DIR
package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
)

const workers = 2

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: syncfloor FILES_DIR OUT_DIR | syncfloor -walk FILES_DIR")
		os.Exit(2)
	}
	if os.Args[1] == "-walk" {
		walk(os.Args[2])
		return
	}
	root, out := os.Args[1], os.Args[2]
	byID := filepath.Join(out, "by-id")
	if err := os.MkdirAll(byID, 0o755); err != nil {
		fail(err)
	}
	start := time.Now()
	paths := make(chan string, 256)
	var n atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			buf := make([]byte, 256<<10)
			for p := range paths {
				if err := one(root, byID, p, buf, w); err != nil {
					fail(err)
				}
				n.Add(1)
			}
		})
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			paths <- p
		}
		return nil
	})
	close(paths)
	wg.Wait()
	if err != nil {
		fail(err)
	}
	el := time.Since(start)
	fmt.Printf("syncfloor: %d files in %.2f s (%.0f files/s)\n", n.Load(), el.Seconds(), float64(n.Load())/el.Seconds())
}

// walk is WalkDir plus an Lstat of every file.
func walk(root string) {
	start := time.Now()
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
	if err != nil {
		fail(err)
	}
	fmt.Printf("syncfloor -walk: %d files in %.2f s\n", n, time.Since(start).Seconds())
}

// one hashes p and writes its document.
func one(root, byID, p string, buf []byte, worker int) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	h := xxhash.New()
	for {
		k, err := f.Read(buf)
		h.Write(buf[:k])
		if err != nil {
			break
		}
	}
	f.Close()
	var sum [8]byte
	id := hex.EncodeToString(h.Sum(sum[:0]))
	rel, _ := filepath.Rel(root, p)
	doc, err := json.MarshalIndent(map[string]any{
		"id": id, "paths": map[string]float64{rel: float64(st.ModTime().UnixNano()) / 1e9},
		"size": st.Size(), "next": "",
	}, "", "    ")
	if err != nil {
		return err
	}
	dir := filepath.Join(byID, id)
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return err
	}
	tmp := filepath.Join(dir, ".document.json."+strconv.Itoa(worker))
	if err := os.WriteFile(tmp, append(doc, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "document.json"))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "syncfloor:", err)
	os.Exit(1)
}
