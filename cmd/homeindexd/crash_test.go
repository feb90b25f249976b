package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/app"
	"github.com/homeindex/homeindex/internal/config"
)

// crashFiles is the size of the crash test's tree (20k files: large enough that a kill lands mid-batch).
const crashFiles = 20000

// TestKill9DuringSyncLosesNothing kills `homeindexd sync` with SIGKILL at several points of a
// 20k-file sync (while files are recorded, while the outbox writes the metadata directory and
// the index), then runs a clean sync: the catalog, the metadata directory and the index must
// agree exactly and hold every file.
func TestKill9DuringSyncLosesNothing(t *testing.T) {
	d := newDaemonEnv(t, "HASH_WORKERS", "2")
	d.plain = true
	for i := 0; i < crashFiles; i++ {
		d.write(fmt.Sprintf("dir%03d/file%05d.txt", i%200, i), fmt.Sprintf("content of file %d", i))
	}
	for i := 0; i < 50; i++ { // a few duplicates
		d.write(fmt.Sprintf("dups/copy%02d.txt", i), fmt.Sprintf("content of file %d", i))
	}
	catalogDB := filepath.Join(d.vars["STATE_DIRECTORY"], "catalog.db")
	byID := filepath.Join(d.vars["METADATA_DIRECTORY"], "by-id")
	files := func() int { return countRows(t, catalogDB, "files") }
	docsOnDisk := func() int {
		es, _ := os.ReadDir(byID)
		return len(es)
	}
	points := []struct {
		name string
		at   func() bool
	}{
		{"first files recorded", func() bool { return files() > 0 }},
		{"half the files recorded", func() bool { return files() >= crashFiles/2 }},
		{"metadata directory being written", func() bool { return docsOnDisk() >= 500 }},
		{"metadata directory half written", func() bool { return docsOnDisk() >= crashFiles/2 }},
	}
	for _, p := range points {
		killAt(t, d, p.name, p.at)
	}
	if _, stderr, code := d.run("sync"); code != 0 {
		t.Fatalf("clean sync: exit %d\n%s", code, stderr)
	}
	cfg, err := config.Load(func(k string) string { return d.vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	problems, err := a.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("%d disagreements after kill -9 and a clean sync, e.g.:\n%s", len(problems), strings.Join(problems[:min(20, len(problems))], "\n"))
	}
	live, retired, err := a.Catalog.CountDocuments(context.Background())
	if err != nil || live != crashFiles || retired != 0 {
		t.Fatalf("documents: live %d retired %d (%v), want %d", live, retired, err, crashFiles)
	}
	if n := files(); n != crashFiles+50 {
		t.Fatalf("paths: %d, want %d", n, crashFiles+50)
	}
}

// killAt starts a sync and SIGKILLs it once at() holds. A sync that finishes first fails the
// test: the kill point must be reached mid-sync.
func killAt(t *testing.T, d *daemonEnv, name string, at func() bool) {
	t.Helper()
	c := d.cmd(context.Background(), "sync")
	var out strings.Builder
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	deadline := time.After(3 * time.Minute)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			t.Fatalf("kill point %q: sync ended (%v) before it was reached\n%s", name, err, out.String())
		case <-deadline:
			c.Process.Kill()
			t.Fatalf("kill point %q never reached", name)
		case <-tick.C:
		}
		if at() {
			break
		}
	}
	if err := c.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	t.Logf("killed at %q", name)
}

// countRows reads a table's row count from the catalog while another process writes it.
func countRows(t *testing.T, path, table string) int {
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return 0
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		return 0
	}
	return n
}
