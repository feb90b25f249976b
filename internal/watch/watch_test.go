package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// changes records OnChange calls.
type changes struct {
	ch chan string
}

func newChanges() *changes { return &changes{ch: make(chan string, 1000)} }

func (c *changes) on(reason string) { c.ch <- reason }

// wait waits for one OnChange call.
func (c *changes) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-c.ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("no change reported: %s", what)
	}
}

// start runs a Watcher over root until the test ends and waits for its watches to be placed.
func start(t *testing.T, cfg Config) (*Watcher, *changes) {
	t.Helper()
	c := newChanges()
	cfg.OnChange = c.on
	if cfg.Log.GetLevel() == zerolog.DebugLevel {
		cfg.Log = zerolog.Nop()
	}
	w := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "watches placed", func() bool { return w.Status().Mode != "starting" })
	return w, c
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
	}
}

// mkTree makes dirs directories (d000 .. under root, each with one file) and returns root.
func mkTree(t *testing.T, dirs int) string {
	t.Helper()
	root := t.TempDir()
	for i := range dirs {
		d := filepath.Join(root, fmt.Sprintf("d%03d", i))
		mustMkdir(t, d)
		mustWrite(t, filepath.Join(d, "f.txt"), "x")
	}
	return root
}

func mustMkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBudgetIsRespected(t *testing.T) {
	root := mkTree(t, 20)
	w, _ := start(t, Config{Roots: []string{root}, Budget: 5, Settle: 50 * time.Millisecond})
	st := w.Status()
	if st.Watches != 5 || st.Budget != 5 {
		t.Fatalf("watches %d budget %d, want 5 and 5", st.Watches, st.Budget)
	}
	if !st.Fallback || st.Mode != "inotify+rewalk" || st.UnwatchedDirs != 16 || strings.Join(st.Reasons, ",") != reasonBudget {
		t.Fatalf("status %+v: want the fallback for 16 directories past the budget", st)
	}
	// A new directory in a watched one does not go past the budget either.
	mustMkdir(t, filepath.Join(root, "d000", "new", "deeper"))
	waitFor(t, "the new directory placed", func() bool { return w.Status().UnwatchedDirs == 17 })
	if st := w.Status(); st.Watches != 5 {
		t.Fatalf("watches %d past the budget 5", st.Watches)
	}
}

func TestTinyBudgetFallsBackToRewalks(t *testing.T) {
	root := mkTree(t, 3)
	deep := filepath.Join(root, "d002", "a", "b")
	mustMkdir(t, deep)
	w, c := start(t, Config{Roots: []string{root}, Budget: 1, Rewalk: 100 * time.Millisecond, Settle: 50 * time.Millisecond})
	if st := w.Status(); !st.Fallback || st.Watches != 1 {
		t.Fatalf("status %+v: want one watch and the fallback", st)
	}
	waitFor(t, "the baseline re-walk", func() bool { return w.Status().Rewalks >= 1 })
	mustWrite(t, filepath.Join(deep, "new.txt"), "hello")
	c.wait(t, "a file three levels down in an unwatched directory")
	if w.Status().Rewalks < 2 {
		t.Fatal("the change was not found by a re-walk")
	}
	// A changed size is found too, and so is a deletion.
	mustWrite(t, filepath.Join(deep, "new.txt"), "hello again")
	c.wait(t, "a changed file")
	if err := os.RemoveAll(filepath.Join(root, "d002", "a")); err != nil {
		t.Fatal(err)
	}
	c.wait(t, "a removed directory")
}

func TestNoBudgetMeansRewalksOnly(t *testing.T) {
	root := mkTree(t, 2)
	w, c := start(t, Config{Roots: []string{root}, Budget: 0, Rewalk: 100 * time.Millisecond})
	if st := w.Status(); st.Mode != "rewalk" || st.Watches != 0 {
		t.Fatalf("status %+v, want rewalk mode", st)
	}
	waitFor(t, "the baseline re-walk", func() bool { return w.Status().Rewalks >= 1 })
	mustWrite(t, filepath.Join(root, "top.txt"), "x")
	c.wait(t, "a new top-level file")
}

func TestRemoteFileSystemIsRewalked(t *testing.T) {
	root := mkTree(t, 2)
	old := statfsType
	statfsType = func(string) (int64, error) { return 0x6969, nil } // NFS
	t.Cleanup(func() { statfsType = old })
	w, c := start(t, Config{Roots: []string{root}, Budget: 100, Rewalk: 100 * time.Millisecond})
	if st := w.Status(); st.Mode != "rewalk" || st.Watches != 0 || strings.Join(st.Reasons, ",") != reasonRemote {
		t.Fatalf("status %+v: want re-walks for a network file system", st)
	}
	waitFor(t, "the baseline re-walk", func() bool { return w.Status().Rewalks >= 1 })
	mustWrite(t, filepath.Join(root, "d001", "new.txt"), "x")
	c.wait(t, "a new file on the network file system")
}

func TestCoalescesBursts(t *testing.T) {
	root := mkTree(t, 1)
	w, c := start(t, Config{Roots: []string{root}, Budget: 100, Settle: time.Second})
	for i := range 200 {
		mustWrite(t, filepath.Join(root, "d000", fmt.Sprintf("burst%03d.txt", i)), "x")
	}
	c.wait(t, "the burst")
	st := w.Status()
	if st.Batches != 1 || st.Events < 200 {
		t.Fatalf("batches %d events %d: want 200+ events in one batch", st.Batches, st.Events)
	}
}

func TestBusyTreeStillReportsWithinTheCap(t *testing.T) {
	root := mkTree(t, 1)
	_, c := start(t, Config{Roots: []string{root}, Budget: 100, Settle: time.Hour, MaxDelay: 300 * time.Millisecond})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // a file appended to every 20 ms: the tree never settles
		defer close(done)
		f, err := os.Create(filepath.Join(root, "d000", "log.txt"))
		if err != nil {
			return
		}
		defer f.Close()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				_, _ = f.WriteString("line\n")
			}
		}
	}()
	c.wait(t, "a change report while the tree is still busy")
	close(stop)
	<-done
}

func TestDirectoriesCreatedAfterStartAreWatched(t *testing.T) {
	root := mkTree(t, 1)
	w, c := start(t, Config{Roots: []string{root}, Budget: 100, Settle: 50 * time.Millisecond})
	before := w.Status().Watches
	deep := filepath.Join(root, "new", "a", "b")
	mustMkdir(t, deep)
	waitFor(t, "watches on the new directories", func() bool { return w.Status().Watches == before+3 })
	c.wait(t, "the new directories")
	events := w.Status().Events
	mustWrite(t, filepath.Join(deep, "file.txt"), "x")
	c.wait(t, "a file in a directory created after start")
	if w.Status().Events <= events {
		t.Fatal("no event from the new directory's watch")
	}
	// Moving the tree away and removing it gives the watches back.
	if err := os.Rename(filepath.Join(root, "new"), filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "watches follow the move", func() bool { return w.Status().Watches == before+3 })
	if err := os.RemoveAll(filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "watches given back", func() bool { return w.Status().Watches == before })
}

func TestSkippedPathsAreNotWatched(t *testing.T) {
	root := mkTree(t, 1)
	meta := filepath.Join(root, "metadata")
	mustMkdir(t, filepath.Join(meta, "by-id"))
	skip := func(p string) bool {
		return p == meta || strings.HasPrefix(p, meta+"/") || filepath.Base(p) == "marker"
	}
	w, c := start(t, Config{Roots: []string{root}, Budget: 100, Settle: 50 * time.Millisecond, Skip: skip})
	if st := w.Status(); st.Watches != 2 {
		t.Fatalf("watches %d, want 2 (root and d000, not the metadata directory)", st.Watches)
	}
	mustWrite(t, filepath.Join(root, "d000", "marker"), "x")
	mustWrite(t, filepath.Join(meta, "by-id", "doc.json"), "{}")
	mustWrite(t, filepath.Join(root, "d000", "real.txt"), "x")
	c.wait(t, "the real file")
	if st := w.Status(); st.Events < 1 || st.Events > 2 {
		t.Fatalf("events %d, want real.txt's create and write only (markers and the metadata directory ignored)", st.Events)
	}
}

func TestBudgetFromPercent(t *testing.T) {
	b, maxUser := Budget(0, 50)
	if maxUser <= 0 {
		t.Fatalf("%s not read", MaxUserWatchesFile)
	}
	if b != maxUser/2 {
		t.Fatalf("budget %d, want half of %d", b, maxUser)
	}
	if b, _ := Budget(123, 0); b != 123 {
		t.Fatalf("absolute budget %d, want 123", b)
	}
}
