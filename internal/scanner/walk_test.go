package scanner

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// walkAll walks root and returns the entries and the per-path errors.
func walkAll(t *testing.T, root string, opt WalkOptions) ([]Entry, map[string]error) {
	t.Helper()
	errs := map[string]error{}
	if opt.OnError == nil {
		opt.OnError = func(rel string, err error) { errs[rel] = err }
	}
	var got []Entry
	err := Walk(t.Context(), root, opt, func(e Entry) error {
		got = append(got, e)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return got, errs
}

func rels(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Rel
	}
	return out
}

func TestWalkYieldsByteOrder(t *testing.T) {
	root := t.TempDir()
	// Names chosen so that sorting each directory by plain name would not give byte order of
	// the full paths: '-', ' ', '.' and '0' sort around '/'.
	files := []string{
		"a", "a b", "a-b", "a.txt", "a0", "A",
		"b/x", "b-c", "b.d/y", "b0/z", "b/c/d", "b/c-d", "b/c.e", "b/c/d.f",
		"é", "z/\xff", "_",
	}
	m := map[string]string{}
	for _, f := range files {
		m[f] = f
	}
	writeFiles(t, root, m)

	got, errs := walkAll(t, root, WalkOptions{})
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	want := slices.Clone(files)
	slices.Sort(want) // Go string order is byte order
	if g := rels(got); !slices.Equal(g, want) {
		t.Errorf("order:\n got %q\nwant %q", g, want)
	}
}

func TestWalkEntryFields(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"d/f": "hello"})
	got, _ := walkAll(t, root, WalkOptions{})
	if len(got) != 1 {
		t.Fatalf("entries = %v", got)
	}
	want := osStat(t, filepath.Join(root, "d", "f"), os.Lstat)
	if e := got[0]; e.Rel != "d/f" || e.Stat() != want || e.Symlink {
		t.Errorf("entry = %+v, want d/f %+v", e, want)
	}
}

func TestWalkSymlinks(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"real/f": "data", "z-after": ""})
	symlink(t, "real/f", filepath.Join(root, "link-file"))
	symlink(t, "real", filepath.Join(root, "link-dir"))
	symlink(t, "nowhere", filepath.Join(root, "broken"))
	symlink(t, "loop", filepath.Join(root, "loop"))

	got, errs := walkAll(t, root, WalkOptions{})

	if g, want := rels(got), []string{"link-file", "real/f", "z-after"}; !slices.Equal(g, want) {
		t.Errorf("entries = %q, want %q (directory link not followed, broken ones skipped)", g, want)
	}
	target := osStat(t, filepath.Join(root, "real", "f"), os.Stat)
	if e := got[0]; !e.Symlink || e.Stat() != target {
		t.Errorf("link-file = %+v, want Symlink with the target's stat %+v", e, target)
	}
	if got[1].Symlink {
		t.Errorf("real/f marked as symlink")
	}
	if err := errs["broken"]; !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("broken: err = %v, want ErrNotExist", err)
	}
	if err := errs["loop"]; !errors.Is(err, syscall.ELOOP) {
		t.Errorf("loop: err = %v, want ELOOP", err)
	}
	if len(errs) != 2 {
		t.Errorf("errors = %v, want only broken and loop", errs)
	}
}

func TestWalkSkip(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"metadata/by-id/x/document.json": "{}",
		"archive/d1/photo.jpg":           "x",
		"archive/d1-status-ready":        "t",
		"keep.txt":                       "k",
	})
	var asked []string
	opt := WalkOptions{Skip: func(rel string, isDir bool) bool {
		asked = append(asked, rel)
		return (isDir && rel == "metadata") || (!isDir && rel == "archive/d1-status-ready")
	}}
	got, errs := walkAll(t, root, opt)
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if g, want := rels(got), []string{"archive/d1/photo.jpg", "keep.txt"}; !slices.Equal(g, want) {
		t.Errorf("entries = %q, want %q", g, want)
	}
	wantAsked := []string{"archive", "archive/d1-status-ready", "archive/d1", "archive/d1/photo.jpg", "keep.txt", "metadata"}
	if !slices.Equal(asked, wantAsked) {
		t.Errorf("Skip asked %q, want %q (a skipped directory is not entered)", asked, wantAsked)
	}
}

func TestWalkEntryVanishingMidWalk(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a/victim": "v", "a/z": "z", "gone/f": "f", "last": "l"})
	// Skip runs after ReadDir listed the entry and before it is stat'ed or opened: removing
	// the entry there is exactly a file or directory vanishing mid-walk.
	opt := WalkOptions{Skip: func(rel string, isDir bool) bool {
		switch rel {
		case "a/victim", "gone":
			if err := os.RemoveAll(filepath.Join(root, rel)); err != nil {
				t.Error(err)
			}
		}
		return false
	}}
	got, errs := walkAll(t, root, opt)
	if g, want := rels(got), []string{"a/z", "last"}; !slices.Equal(g, want) {
		t.Errorf("entries = %q, want %q", g, want)
	}
	for _, rel := range []string{"a/victim", "gone"} {
		var pe *fs.PathError
		if err := errs[rel]; !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != rel {
			t.Errorf("%s: err = %v, want a PathError for %s wrapping ErrNotExist", rel, err, rel)
		}
	}
	if len(errs) != 2 {
		t.Errorf("errors = %v", errs)
	}
}

func TestWalkUnreadableDirectory(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"locked/secret": "s", "open": "o"})
	locked := filepath.Join(root, "locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(locked, 0o755) })
	// Root (CAP_DAC_OVERRIDE) reads a mode-000 directory anyway; learn which case we are in
	// from the filesystem itself rather than from the uid.
	_, probeErr := os.ReadDir(locked)

	got, errs := walkAll(t, root, WalkOptions{})

	if probeErr == nil {
		if g, want := rels(got), []string{"locked/secret", "open"}; !slices.Equal(g, want) {
			t.Errorf("privileged: entries = %q, want %q", g, want)
		}
		if len(errs) != 0 {
			t.Errorf("privileged: errors = %v", errs)
		}
		return
	}
	if g, want := rels(got), []string{"open"}; !slices.Equal(g, want) {
		t.Errorf("entries = %q, want %q", g, want)
	}
	if err := errs["locked"]; !errors.Is(err, fs.ErrPermission) {
		t.Errorf("locked: err = %v, want ErrPermission", err)
	}
}

func TestWalkIgnoresSpecialFiles(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"f": "x"})
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, errs := walkAll(t, root, WalkOptions{})
	if g := rels(got); !slices.Equal(g, []string{"f"}) || len(errs) != 0 {
		t.Errorf("entries = %q, errors = %v; want only f, no errors", g, errs)
	}
}

func TestWalkStopsWhenFnFails(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a": "", "b/c": "", "b/d": "", "e": ""})
	stop := errors.New("stop")
	var seen []string
	err := Walk(t.Context(), root, WalkOptions{}, func(e Entry) error {
		seen = append(seen, e.Rel)
		if e.Rel == "b/c" {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want stop", err)
	}
	if !slices.Equal(seen, []string{"a", "b/c"}) {
		t.Errorf("seen = %q", seen)
	}
}

func TestWalkStopsWhenContextDone(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a": "", "b/c": "", "b/d": "", "e": ""})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var seen []string
	err := Walk(ctx, root, WalkOptions{}, func(e Entry) error {
		seen = append(seen, e.Rel)
		if e.Rel == "b/c" {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !slices.Equal(seen, []string{"a", "b/c"}) {
		t.Errorf("seen = %q", seen)
	}
}

func TestWalkRootErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"file": ""})
	noop := func(Entry) error { return nil }
	if err := Walk(t.Context(), filepath.Join(dir, "missing"), WalkOptions{}, noop); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing root: err = %v, want ErrNotExist", err)
	}
	if err := Walk(t.Context(), filepath.Join(dir, "file"), WalkOptions{}, noop); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("file root: err = %v, want ENOTDIR", err)
	}
}

func TestWalkFollowsSymlinkedRoot(t *testing.T) {
	// INDEX_DIRECTORY itself may be a symlink (a bind or a convenience link); only links
	// inside the tree are not followed.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"real/f": ""})
	symlink(t, "real", filepath.Join(dir, "root"))
	got, _ := walkAll(t, filepath.Join(dir, "root"), WalkOptions{})
	if g := rels(got); !slices.Equal(g, []string{"f"}) {
		t.Errorf("entries = %q", g)
	}
}

func TestCompareNames(t *testing.T) {
	tests := []struct {
		a    string
		aDir bool
		b    string
		bDir bool
		want int
	}{
		{"a", true, "a-b", false, 1},   // "a/" > "a-b"
		{"a", false, "a-b", false, -1}, // "a" < "a-b"
		{"a", true, "a0", false, -1},   // "a/" < "a0"
		{"a-b", false, "a", true, -1},
		{"a0", true, "a", true, 1},
		{"x", false, "x", false, 0},
		{"ab", true, "b", false, -1},
	}
	for _, tt := range tests {
		if got := compareNames(tt.a, tt.aDir, tt.b, tt.bDir); got != tt.want {
			t.Errorf("compareNames(%q dir=%v, %q dir=%v) = %d, want %d", tt.a, tt.aDir, tt.b, tt.bDir, got, tt.want)
		}
	}
}
