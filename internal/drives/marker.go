package drives

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/homeindex/homeindex/internal/durable"
)

// State is a drive's marker state.
type State string

// Marker states. Pending: some document with a path on the drive still has modules to run.
const (
	Ready   State = "ready"
	Pending State = "pending"
)

// MarkerTimeFormat is the layout of a marker's content: the UTC time of the last change.
const MarkerTimeFormat = "2006-01-02T15:04:05Z"

const (
	markerInfix = "-status-"
	// tempPrefix starts the temp file of a marker write. The temp name also ends in the marker
	// suffix, so IsMarker holds for it and a scan never indexes it.
	tempPrefix = ".homeindex-tmp-"
)

func (s State) valid() bool { return s == Ready || s == Pending }

func (s State) opposite() State {
	if s == Ready {
		return Pending
	}
	return Ready
}

// IsMarker reports whether a file name (or path) is a status marker: it ends in
// "-status-ready" or "-status-pending". Markers are never indexed, wherever they are found.
func IsMarker(name string) bool {
	return strings.HasSuffix(name, markerInfix+string(Ready)) ||
		strings.HasSuffix(name, markerInfix+string(Pending))
}

// MarkerName returns the file name of a drive's marker: <drive>-status-<state>.
func MarkerName(drive string, s State) string { return drive + markerInfix + string(s) }

func (a Archive) markerPath(drive string, s State) string {
	return filepath.Join(a.dir, MarkerName(drive, s))
}

// SetMarker puts the drive in state s: it writes <dir>/<drive>-status-<s> atomically (temp file,
// fsync, rename, fsync dir) with now in UTC as MarkerTimeFormat, then removes the opposite marker.
// It always writes: the caller decides when the state "changed" (compare with Marker first). On a
// write error both markers are left as they were.
func (a Archive) SetMarker(drive string, s State, now time.Time) error {
	if err := checkName(drive); err != nil {
		return fmt.Errorf("set marker: %w", err)
	}
	if !s.valid() {
		return fmt.Errorf("set marker %s: invalid state %q", drive, s)
	}
	if err := a.writeMarker(drive, s, now); err != nil {
		return err
	}
	return removeIfExists(a.markerPath(drive, s.opposite()))
}

func (a Archive) writeMarker(drive string, s State, now time.Time) error {
	p := a.markerPath(drive, s)
	fail := func(err error) error {
		return fmt.Errorf("write marker %s: %w", p, bare(err))
	}
	data := []byte(now.UTC().Format(MarkerTimeFormat))
	if err := durable.ReplaceFile(a.dir, tempPrefix+"*"+markerInfix+string(s), p, data, 0o644, true); err != nil {
		return fail(err)
	}
	if err := durable.SyncDir(a.dir); err != nil {
		return fail(err)
	}
	return nil
}

// bare drops the *PathError or *LinkError wrapper, whose path is a temp name and only noise in
// "write marker /files/archive/drive1-status-ready: read-only file system".
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

func removeIfExists(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove marker %s: %w", p, bare(err))
	}
	return nil
}

// Marker returns the drive's current marker state and content; ok is false when it has none.
// When both markers exist (a crash between writing one and removing the other) the newer one
// wins, and pending on a tie.
func (a Archive) Marker(drive string) (s State, content string, ok bool, err error) {
	if err := checkName(drive); err != nil {
		return "", "", false, fmt.Errorf("read marker: %w", err)
	}
	type found struct {
		state   State
		content string
		mtime   time.Time
	}
	var have []found
	for _, st := range []State{Pending, Ready} {
		p := a.markerPath(drive, st)
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", "", false, fmt.Errorf("read marker %s: %w", p, bare(err))
		}
		fi, err := os.Stat(p)
		if err != nil {
			return "", "", false, fmt.Errorf("read marker %s: %w", p, bare(err))
		}
		have = append(have, found{st, string(b), fi.ModTime()})
	}
	switch len(have) {
	case 0:
		return "", "", false, nil
	case 2:
		if have[1].mtime.After(have[0].mtime) {
			return have[1].state, have[1].content, true, nil
		}
	}
	return have[0].state, have[0].content, true, nil
}

// RemoveMarkers removes both markers of a drive. Missing markers are fine.
func (a Archive) RemoveMarkers(drive string) error {
	if err := checkName(drive); err != nil {
		return fmt.Errorf("remove markers: %w", err)
	}
	return errors.Join(removeIfExists(a.markerPath(drive, Ready)), removeIfExists(a.markerPath(drive, Pending)))
}

// MarkerDrives lists, sorted, the drives that have a marker file in the archive directory,
// whether or not the drive exists, so the caller can remove markers of drives no document
// references. A missing archive directory gives none.
func (a Archive) MarkerDrives() ([]string, error) {
	entries, err := os.ReadDir(a.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list markers: %w", err)
	}
	var drives []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, tempPrefix) {
			continue
		}
		for _, st := range []State{Ready, Pending} {
			drive, found := strings.CutSuffix(name, markerInfix+string(st))
			if found && ValidName(drive) && !slices.Contains(drives, drive) {
				drives = append(drives, drive)
			}
		}
	}
	slices.Sort(drives)
	return drives, nil
}

// CleanTemp removes temp files of marker writes that a crash interrupted. Call it at start,
// before any SetMarker. A missing archive directory is fine.
func (a Archive) CleanTemp() error {
	entries, err := os.ReadDir(a.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clean marker temp files: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() && strings.HasPrefix(e.Name(), tempPrefix) && IsMarker(e.Name()) {
			if err := os.Remove(filepath.Join(a.dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("clean marker temp files: %w", err)
	}
	return nil
}
