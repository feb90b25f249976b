// Package watch notices changes under the files tree (archive drives included) and asks for a
// sync once the tree has been quiet for a while. It places recursive inotify watches, one per
// directory, within a budget (a share of the kernel's per-user watch limit, which every other
// program of the user shares); directories it cannot watch (past the budget, inotify
// unavailable, or on network and FUSE file systems where inotify misses remote changes) are
// re-walked every REWALK_INTERVAL instead, comparing a digest per directory. The watcher never
// decides what changed: the sync's walk stays the source of truth, the watcher only says when
// to run it.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"
)

// Defaults.
const (
	DefaultRewalk   = 30 * time.Second
	DefaultSettle   = 5 * time.Second
	DefaultMaxDelay = 30 * time.Second // a busy tree still syncs this often
	DefaultPercent  = 50               // of max_user_watches
)

// MaxUserWatchesFile is where Linux keeps the per-user inotify watch limit.
const MaxUserWatchesFile = "/proc/sys/fs/inotify/max_user_watches"

// Config is what a Watcher needs.
type Config struct {
	// Roots are watched recursively (absolute, clean paths): the files root, and the archive
	// directory when it lies outside it.
	Roots []string
	// Skip keeps paths (absolute) out: the metadata and state directories inside the tree and
	// the drives' status markers, which the daemon writes itself.
	Skip func(path string) bool
	// Budget is the most watches placed; 0 places none (re-walks only).
	Budget int
	// Rewalk is the period of the light re-walk of unwatched directories (default 30 s).
	Rewalk time.Duration
	// Settle is how long the tree must be quiet before a batch of changes is reported
	// (default 5 s; 0 reports at once); MaxDelay caps how long a batch waits (default 30 s).
	Settle, MaxDelay time.Duration
	// OnChange is called with a short reason once a batch of changes is complete. It must not
	// block for long (the scheduler's Trigger does not).
	OnChange func(reason string)
	Log      zerolog.Logger
}

// Budget resolves WATCH_LIMIT: an absolute count when limit > 0 (or 0 meaning none),
// otherwise percent of the kernel's max_user_watches. maxUser is what the kernel allows (0 when
// unknown, and the budget is then 0).
func Budget(limit, percent int) (budget, maxUser int) {
	b, err := os.ReadFile(MaxUserWatchesFile)
	if err == nil {
		fmt.Sscan(strings.TrimSpace(string(b)), &maxUser)
	}
	if percent > 0 {
		return maxUser * percent / 100, maxUser
	}
	return max(limit, 0), maxUser
}

// Status is the watcher's state as /api/status shows it.
type Status struct {
	// Mode is "inotify" (everything watched), "inotify+rewalk" (some directories re-walked),
	// "rewalk" (nothing watched) or "starting".
	Mode           string `json:"mode"`
	Watches        int    `json:"watches"`
	Budget         int    `json:"budget"`
	MaxUserWatches int    `json:"max_user_watches"`
	// Fallback is true when some directories are re-walked rather than watched; Reasons says
	// why, UnwatchedDirs how many subtrees that is.
	Fallback       bool     `json:"fallback"`
	Reasons        []string `json:"fallback_reasons"`
	UnwatchedDirs  int      `json:"unwatched_dirs"`
	RewalkSeconds  float64  `json:"rewalk_interval_seconds"`
	SettleSeconds  float64  `json:"settle_seconds"`
	Rewalks        int64    `json:"rewalks_total"`
	LastRewalkSecs float64  `json:"last_rewalk_seconds"`
	Events         int64    `json:"events_total"`
	Batches        int64    `json:"batches_total"`
	Overflows      int64    `json:"overflows_total"`
	// Pending is true while a batch of changes waits for the tree to settle.
	Pending bool `json:"pending"`
}

// Fallback reasons.
const (
	reasonBudget  = "watch budget reached"
	reasonKernel  = "kernel watch limit reached"
	reasonRemote  = "network or FUSE file system"
	reasonNoInote = "inotify unavailable"
)

// Watcher watches the tree. Build it with New, then Run it.
type Watcher struct {
	cfg Config
	fw  *fsnotify.Watcher // nil when inotify is unavailable

	mu        sync.Mutex
	watched   map[string]struct{}
	unwatched map[string]string // subtree root -> reason
	reasons   map[string]int    // reason -> subtrees
	digests   map[string]uint64 // re-walked directory -> digest of its entries
	remoteDev map[uint64]bool   // device -> on a network/FUSE file system
	started   bool
	pending   bool
	maxUser   int

	events, batches, rewalks, overflows atomic.Int64
	lastRewalk                          atomic.Int64 // ns
}

// statfsType returns the file system magic of path (a variable so tests can pretend).
var statfsType = func(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Type), nil
}

// remoteMagic lists file systems where inotify does not see changes made by other machines.
var remoteMagic = map[int64]string{
	0x6969:     "nfs",
	0x517B:     "smb",
	0xFF534D42: "cifs",
	0xFE534D42: "smb2",
	0x65735546: "fuse",
	0x01021997: "9p",
	0x00C36400: "ceph",
	0x5346414F: "afs",
	0x73757245: "coda",
	0x47504653: "gpfs",
	0x013111A8: "ibrix",
	0x0BD00BD0: "lustre",
}

// New builds a Watcher. It does not touch the tree yet.
func New(cfg Config) *Watcher {
	if cfg.Rewalk <= 0 {
		cfg.Rewalk = DefaultRewalk
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = DefaultMaxDelay
	}
	if cfg.Skip == nil {
		cfg.Skip = func(string) bool { return false }
	}
	if cfg.OnChange == nil {
		cfg.OnChange = func(string) {}
	}
	_, maxUser := Budget(0, 0)
	return &Watcher{cfg: cfg, watched: map[string]struct{}{}, unwatched: map[string]string{},
		reasons: map[string]int{}, digests: map[string]uint64{}, remoteDev: map[uint64]bool{}, maxUser: maxUser}
}

// Status returns the watcher's state.
func (w *Watcher) Status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := Status{Watches: len(w.watched), Budget: w.cfg.Budget, MaxUserWatches: w.maxUser,
		UnwatchedDirs: len(w.unwatched), Fallback: len(w.unwatched) > 0, Reasons: []string{},
		RewalkSeconds: w.cfg.Rewalk.Seconds(), SettleSeconds: w.cfg.Settle.Seconds(),
		Rewalks: w.rewalks.Load(), LastRewalkSecs: time.Duration(w.lastRewalk.Load()).Seconds(),
		Events: w.events.Load(), Batches: w.batches.Load(), Overflows: w.overflows.Load(), Pending: w.pending}
	for r := range w.reasons {
		st.Reasons = append(st.Reasons, r)
	}
	sort.Strings(st.Reasons)
	switch {
	case !w.started:
		st.Mode = "starting"
	case len(w.unwatched) == 0:
		st.Mode = "inotify"
	case len(w.watched) == 0:
		st.Mode = "rewalk"
	default:
		st.Mode = "inotify+rewalk"
	}
	return st
}

// Run places the watches, then reports changes until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	if w.cfg.Budget > 0 {
		fw, err := fsnotify.NewBufferedWatcher(4096)
		if err != nil {
			w.cfg.Log.Warn().Err(err).Msg("inotify unavailable")
		} else {
			w.fw = fw
			defer fw.Close()
		}
	}
	start := time.Now()
	for _, r := range w.cfg.Roots {
		w.place(r)
	}
	w.mu.Lock()
	w.started = true
	w.mu.Unlock()
	st := w.Status()
	w.cfg.Log.Info().Int("watches", st.Watches).Int("budget", st.Budget).Int("max_user_watches", st.MaxUserWatches).
		Dur("took", time.Since(start)).Msg("watching the tree for changes")
	if st.Fallback {
		w.cfg.Log.Warn().Strs("reasons", st.Reasons).Int("directories", st.UnwatchedDirs).Dur("every", w.cfg.Rewalk).
			Msg("change detection falls back to periodic re-walks for directories without a watch")
	}
	w.rewalk() // the baseline digests

	var events <-chan fsnotify.Event
	var errs <-chan error
	var dropped atomic.Bool
	if w.fw != nil {
		events, errs = pump(w.fw, &dropped)
	}
	rewalk := time.NewTicker(w.cfg.Rewalk)
	defer rewalk.Stop()
	b := batcher{settle: w.cfg.Settle, maxDelay: w.cfg.MaxDelay}
	for {
		select {
		case <-ctx.Done():
			b.stop()
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if dropped.Swap(false) {
				w.overflowed(&b)
			}
			if w.handle(ev) {
				w.note(&b, time.Now())
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.overflowed(&b)
				continue
			}
			w.cfg.Log.Warn().Err(err).Msg("file watcher error")
		case <-rewalk.C:
			if n := w.rewalk(); n > 0 {
				w.cfg.Log.Info().Int("directories", n).Msg("re-walk found changes in unwatched directories")
				w.note(&b, time.Now())
			}
			w.promote()
		case now := <-b.timerC():
			if b.due(now) {
				w.flush(&b)
			}
		}
	}
}

// eventQueue is how many events wait between fsnotify's reader and the watcher's loop.
const eventQueue = 1 << 16

// pump forwards fsnotify's events and errors into queues of the watcher's own, so that
// fsnotify's reader never waits on the loop: the loop calls Add and Remove, which take a lock
// that fsnotify's reader holds while it delivers some errors. Events that do not fit set
// dropped (handled as an overflow).
func pump(fw *fsnotify.Watcher, dropped *atomic.Bool) (<-chan fsnotify.Event, <-chan error) {
	events := make(chan fsnotify.Event, eventQueue)
	errs := make(chan error, 64)
	go func() {
		defer close(events)
		for ev := range fw.Events {
			select {
			case events <- ev:
			default:
				dropped.Store(true)
			}
		}
	}()
	go func() {
		defer close(errs)
		for err := range fw.Errors {
			select {
			case errs <- err:
			default:
				if errors.Is(err, fsnotify.ErrEventOverflow) {
					dropped.Store(true)
				}
			}
		}
	}()
	return events, errs
}

// overflowed handles lost events: directories created meanwhile may lack a watch, so every
// root is placed again (directories already watched are skipped), and a sync follows.
func (w *Watcher) overflowed(b *batcher) {
	w.overflows.Add(1)
	w.cfg.Log.Warn().Msg("file events were lost (queue overflow); watches re-checked, a full sync follows")
	for _, r := range w.cfg.Roots {
		w.place(r)
	}
	w.note(b, time.Now())
}

// note adds one change to the batch.
func (w *Watcher) note(b *batcher, now time.Time) {
	b.add(now)
	w.mu.Lock()
	w.pending = true
	w.mu.Unlock()
}

func (w *Watcher) flush(b *batcher) {
	n := b.take()
	w.batches.Add(1)
	w.mu.Lock()
	w.pending = false
	w.mu.Unlock()
	w.cfg.OnChange(fmt.Sprintf("file changes (%d)", n))
}

// handle takes one inotify event: it keeps the watches in step with directories that appear
// and go, and says whether the event is a change to report.
func (w *Watcher) handle(ev fsnotify.Event) bool {
	if ev.Name == "" || w.cfg.Skip(ev.Name) {
		return false
	}
	w.events.Add(1)
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		w.forget(ev.Name)
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			w.place(ev.Name)
		}
	}
	return true
}

// forget drops the watches and re-walk state of dir and everything below it (a directory
// removed or moved away; a moved directory's watches would otherwise report the old paths).
func (w *Watcher) forget(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, known := w.watched[dir]
	_, unw := w.unwatched[dir]
	_, dig := w.digests[dir]
	if !known && !unw && !dig {
		return
	}
	prefix := dir + string(filepath.Separator)
	for p := range w.watched {
		if p == dir || strings.HasPrefix(p, prefix) {
			if w.fw != nil {
				_ = w.fw.Remove(p) // already gone when the kernel dropped it
			}
			delete(w.watched, p)
		}
	}
	for p, r := range w.unwatched {
		if p == dir || strings.HasPrefix(p, prefix) {
			w.dropUnwatched(p, r)
		}
	}
	w.dropDigests(dir)
}

// dropDigests forgets the re-walk digests of dir and below.
func (w *Watcher) dropDigests(dir string) {
	prefix := dir + string(filepath.Separator)
	for p := range w.digests {
		if p == dir || strings.HasPrefix(p, prefix) {
			delete(w.digests, p)
		}
	}
}

func (w *Watcher) dropUnwatched(p, reason string) {
	delete(w.unwatched, p)
	if w.reasons[reason]--; w.reasons[reason] <= 0 {
		delete(w.reasons, reason)
	}
}

// place watches root and every directory below it, within the budget. A directory that cannot
// be watched becomes a re-walked subtree, and its subdirectories are not visited here.
func (w *Watcher) place(root string) {
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return // a missing archive directory: its parent's watch or re-walk sees it appear
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil // unreadable: the sync reports it; files are not watched one by one
		}
		if p != root && w.cfg.Skip(p) {
			return filepath.SkipDir
		}
		if !w.placeDir(p, d) {
			return filepath.SkipDir
		}
		return nil
	})
}

// placeDir watches one directory; false when it (and so its subtree) is re-walked instead.
func (w *Watcher) placeDir(p string, d fs.DirEntry) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.watched[p]; ok {
		return true
	}
	if _, ok := w.unwatched[p]; ok {
		return false
	}
	reason := ""
	switch {
	case w.remote(p, d):
		reason = reasonRemote
	case w.cfg.Budget > 0 && w.fw == nil:
		reason = reasonNoInote
	case len(w.watched) >= w.cfg.Budget:
		reason = reasonBudget
	default:
		err := w.fw.Add(p)
		if err == nil {
			w.watched[p] = struct{}{}
			return true
		}
		if !errors.Is(err, syscall.ENOSPC) {
			return false // vanished or unreadable: nothing to watch, the sync reports it
		}
		reason = reasonKernel
	}
	if w.started && w.reasons[reason] == 0 { // at start, Run logs the fallback once
		w.cfg.Log.Warn().Str("reason", reason).Str("dir", p).Dur("every", w.cfg.Rewalk).
			Msg("change detection falls back to periodic re-walks for directories without a watch")
	}
	w.unwatched[p] = reason
	w.reasons[reason]++
	return false
}

// remote says whether p lies on a file system where inotify misses changes made elsewhere.
// It asks statfs once per device.
func (w *Watcher) remote(p string, d fs.DirEntry) bool {
	fi, err := d.Info()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	dev := uint64(st.Dev)
	r, seen := w.remoteDev[dev]
	if !seen {
		if t, err := statfsType(p); err == nil {
			_, r = remoteMagic[t]
		}
		w.remoteDev[dev] = r
	}
	return r
}

// promote tries again to watch subtrees left unwatched for want of budget, once watches were
// freed (directories removed).
func (w *Watcher) promote() {
	if w.fw == nil {
		return
	}
	w.mu.Lock()
	var roots []string
	for p, r := range w.unwatched {
		if (r == reasonBudget || r == reasonKernel) && len(w.watched)+len(roots) < w.cfg.Budget {
			roots = append(roots, p)
			w.dropUnwatched(p, r)
			w.dropDigests(p)
		}
	}
	w.mu.Unlock()
	sort.Strings(roots)
	for _, p := range roots {
		w.place(p)
	}
}
