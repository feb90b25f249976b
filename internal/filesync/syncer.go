// Package filesync brings the catalog in step with the files tree: it walks INDEX_DIRECTORY,
// hashes only new or changed files (the catalog's (device, inode, size, mtime) cache), records
// adds, modifications, duplicates and deletions in batched transactions with their outbox keys,
// keeps absent drives' paths, detects renamed drives and updates drive markers.
package filesync

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/drives"
	"github.com/homeindex/homeindex/internal/scanner"
)

// Config is what a Syncer needs.
type Config struct {
	Root        string // INDEX_DIRECTORY
	ArchiveRel  string // ARCHIVE_DIRECTORY relative to Root, slash form
	SkipRel     []string
	HashWorkers int
	BatchSize   int // changes per transaction (default 2000)
	// FirstModule returns the `next` of a new document ("" without modules).
	FirstModule func() string
	// DriveAppeared, when set, is called after a sync in which a drive became present (the
	// dispatcher puts the drive's jobs first).
	DriveAppeared func(name string)
	// Recorded, when set, is called after each committed batch of changes (the outbox may
	// start applying them while the walk goes on).
	Recorded func()
	Now      func() time.Time
	// HoldShare and HoldMin are MISSING_HOLD_SHARE and MISSING_HOLD_MIN: a sync that would
	// make more than HoldShare of the live documents, and at least HoldMin, missing at once
	// holds those removals until the operator confirms. Both zero: no hold.
	HoldShare float64
	HoldMin   int
	// SettleTime: a file modified less than this long ago is left for a later sync
	// (Stats.Unsettled); 0 reads every file at once.
	SettleTime time.Duration
}

// Syncer runs syncs. It is not safe for concurrent Sync calls: the scheduler serialises them.
type Syncer struct {
	cfg     Config
	cat     *catalog.Catalog
	archive drives.Archive
	markers *Markers
	log     zerolog.Logger

	progress progress // live counters of the sync in progress (Progress)
	// settlingDrives appeared in a sync that left some of their files unsettled (settle.go).
	settlingDrives map[string]bool

	reportMu sync.Mutex
	report   *MissingReport // the last sync's held directories and hold
}

// Report returns the last sync's report of held directories and of a held mass removal (nil
// before the first sync of this process; status then reads the catalog's copy).
func (s *Syncer) Report() *MissingReport {
	s.reportMu.Lock()
	defer s.reportMu.Unlock()
	return s.report
}

func (s *Syncer) setReport(r MissingReport) {
	s.reportMu.Lock()
	defer s.reportMu.Unlock()
	s.report = &r
}

// New builds a Syncer.
func New(cfg Config, cat *catalog.Catalog, archive drives.Archive, markers *Markers, log zerolog.Logger) *Syncer {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 2000
	}
	if cfg.FirstModule == nil {
		cfg.FirstModule = func() string { return "" }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Syncer{cfg: cfg, cat: cat, archive: archive, markers: markers, log: log, settlingDrives: map[string]bool{}}
}

// Stats counts what one sync did.
type Stats struct {
	Started     time.Time     `json:"started"`
	Duration    time.Duration `json:"duration_ns"`
	Walked      int           `json:"walked"`
	Hashed      int           `json:"hashed"`
	HashedBytes int64         `json:"hashed_bytes"`
	Unchanged   int           `json:"unchanged"`
	Added       int           `json:"added"`
	Modified    int           `json:"modified"`
	Deleted     int           `json:"deleted"`
	KeptOffline int           `json:"kept_offline"`
	NewDocs     int           `json:"new_documents"`
	// MissingDocs counts documents whose last path disappeared: they left the index, their
	// by-id directory stays for MISSING_RETENTION.
	MissingDocs int `json:"missing_documents"`
	// ReturnedDocs counts missing documents whose content reappeared (no module runs again).
	ReturnedDocs int `json:"returned_documents"`
	// RetiredDocs counts documents whose last path was modified (they go missing too).
	RetiredDocs int `json:"retired_documents"`
	// Held counts paths not found but kept because their directory (or the files root) is
	// empty or unreadable.
	Held int `json:"held"`
	// HeldRemovals counts paths not found whose removal the mass-removal hold kept back.
	HeldRemovals int `json:"held_removals"`
	Errors       int `json:"errors"`
	// Unsettled counts files left for a later sync because they were still being written.
	Unsettled int `json:"unsettled"`
}

// Sync runs one full sync.
func (s *Syncer) Sync(ctx context.Context) (Stats, error) {
	st := Stats{Started: s.cfg.Now()}
	s.progress.start(st.Started)
	defer s.progress.running.Store(false)
	defer func() { st.Duration = time.Since(st.Started) }()
	run := &syncRun{s: s, st: &st, changedDrives: map[string]bool{}, held: map[string]*HeldDir{},
		rootJoins: s.cfg.Root != string(filepath.Separator) && filepath.Clean(s.cfg.Root) == s.cfg.Root}
	if err := run.do(ctx); err != nil {
		st.Duration = time.Since(st.Started)
		return st, err
	}
	st.Duration = time.Since(st.Started)
	return st, nil
}

// syncRun is the state of one sync. The catalog's paths are not held in memory: the walk
// yields paths in byte order and meets the catalog's rows, read in the same order from one
// snapshot (cursor), so each walked path finds its row, and rows the walk passes by are the
// paths not seen (unseen), which deleteMissing sorts out. Memory follows the changes, not the
// tree.
type syncRun struct {
	s             *Syncer
	st            *Stats
	mu            sync.Mutex // guards st.Errors, st.Unsettled and held between the walker and the recorder
	cursor        *fileCursor
	unseen        []catalog.File // catalog rows the walk did not find
	present       map[string]bool
	newDrives     map[string]bool     // drives that became present or known in this sync
	changedDrives map[string]bool     // drives whose paths changed: their marker is rewritten
	held          map[string]*HeldDir // directories found empty or unreadable in this walk
	rootJoins     bool                // the root is clean and not "/": abs joins without Clean
}

func (r *syncRun) do(ctx context.Context) error {
	known, err := r.s.cat.CountFiles(ctx)
	if err != nil {
		return err
	}
	r.s.progress.known.Store(known)
	if err := r.refreshArchiveRel(ctx); err != nil {
		return err
	}
	if err := r.refreshDrives(ctx); err != nil {
		return err
	}
	r.reannounceSettling()
	r.announceDrives() // known documents of a returning drive go first at once
	if err := r.walk(ctx); err != nil {
		return err
	}
	if err := r.deleteMissing(ctx); err != nil {
		return err
	}
	if err := r.detectRenamedDrives(ctx); err != nil {
		return err
	}
	r.announceDrives() // and again with the files this walk found on it
	return r.s.markers.UpdateAll(ctx, r.present, r.changedDrives)
}

// refreshArchiveRel re-derives every path's drive when ARCHIVE_DIRECTORY moved.
func (r *syncRun) refreshArchiveRel(ctx context.Context) error {
	cur := r.s.cfg.ArchiveRel
	prev, ok, err := r.s.cat.Meta(ctx, catalog.MetaArchiveRel)
	if err != nil || (ok && prev == cur) {
		return err
	}
	var moved []catalog.File // paths whose drive changes, with their new drive
	err = r.s.cat.Files(ctx, func(f catalog.File) error {
		if d, _ := drives.DriveOf(cur, f.Path); d != f.Drive {
			f.Drive = d
			moved = append(moved, f)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return r.s.cat.Update(ctx, func(t *catalog.Tx) error {
		for _, f := range moved {
			if err := t.SetFileDrive(ctx, f.Path, f.Drive); err != nil {
				return err
			}
			if err := t.Dirty(ctx, catalog.DocKey(f.DocID)); err != nil {
				return err
			}
		}
		return t.SetMeta(ctx, catalog.MetaArchiveRel, cur)
	})
}

// refreshDrives records drive presence changes and re-dirties the documents whose `offline`
// flag may flip: O(documents on drives that changed), nothing when nothing changed.
func (r *syncRun) refreshDrives(ctx context.Context) error {
	present, err := r.s.archive.Present()
	if err != nil {
		return fmt.Errorf("sync: list drives: %w", err)
	}
	r.present = present
	known, err := r.s.cat.Drives(ctx)
	if err != nil {
		return err
	}
	r.newDrives = map[string]bool{}
	names := map[string]bool{}
	for d := range present {
		names[d] = true
	}
	for d := range known {
		names[d] = true
	}
	referenced, err := r.s.cat.ReferencedDrives(ctx)
	if err != nil {
		return err
	}
	for _, d := range referenced {
		names[d] = true
	}
	return r.s.cat.Update(ctx, func(t *catalog.Tx) error {
		for d := range names {
			was, ok := known[d]
			now := present[d]
			if ok && was == now {
				continue
			}
			if now {
				r.newDrives[d] = true
			}
			r.s.log.Info().Str("drive", d).Bool("present", now).Msg("drive presence changed")
			if err := t.SetDrivePresent(ctx, d, now); err != nil {
				return err
			}
			if err := t.DriveDocIDs(ctx, d, func(id string) error { return t.Dirty(ctx, catalog.DocKey(id)) }); err != nil {
				return err
			}
			if err := t.Dirty(ctx, catalog.DriveKey(d)); err != nil {
				return err
			}
		}
		return nil
	})
}

// driveOf is the drive of a path under the current archive dir.
func (r *syncRun) driveOf(rel string) string {
	d, _ := drives.DriveOf(r.s.cfg.ArchiveRel, rel)
	return d
}

var _ = scanner.TruncateMtime

func (r *syncRun) announceDrives() {
	if r.s.cfg.DriveAppeared == nil {
		return
	}
	for d := range r.newDrives {
		r.s.cfg.DriveAppeared(d)
	}
}
