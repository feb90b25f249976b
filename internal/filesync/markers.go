package filesync

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/drives"
)

// Markers keeps ARCHIVE_DIRECTORY/<drive>-status-{pending,ready} in step with the catalog:
// pending while a document on the drive has a non-empty `next`, else ready; untouched while the
// drive is absent; removed when no path references the drive. Write failures (a read-only
// tree) are logged and counted, never fatal.
type Markers struct {
	cat     *catalog.Catalog
	archive drives.Archive
	log     zerolog.Logger
	now     func() time.Time
	mu      sync.Mutex
	errors  int
}

// NewMarkers builds a Markers.
func NewMarkers(cat *catalog.Catalog, archive drives.Archive, log zerolog.Logger) *Markers {
	return &Markers{cat: cat, archive: archive, log: log, now: time.Now}
}

// Errors returns how many marker writes failed so far.
func (m *Markers) Errors() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.errors
}

// UpdateAll re-evaluates every drive that is present, referenced, marked, or in changed (whose
// paths changed: their marker is rewritten even when the state did not flip, so its time says
// when the drive last changed).
func (m *Markers) UpdateAll(ctx context.Context, present, changed map[string]bool) error {
	names := map[string]bool{}
	for d := range present {
		names[d] = true
	}
	for d := range changed {
		names[d] = true
	}
	ref, err := m.cat.ReferencedDrives(ctx)
	if err != nil {
		return err
	}
	for _, d := range ref {
		names[d] = true
	}
	marked, err := m.archive.MarkerDrives()
	if err != nil {
		m.log.Warn().Err(err).Msg("list drive markers")
	}
	for _, d := range marked {
		names[d] = true
	}
	for d := range names {
		if err := m.Update(ctx, d, present[d], changed[d]); err != nil {
			return err
		}
	}
	return nil
}

// Update re-evaluates one drive. Only catalog errors are returned.
func (m *Markers) Update(ctx context.Context, drive string, present, changed bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, err := m.cat.DriveStatus(ctx, drive)
	if err != nil {
		return err
	}
	cur, _, ok, err := m.archive.Marker(drive)
	if err != nil {
		m.fail(drive, err)
		return nil
	}
	if !st.Referenced {
		if ok {
			if err := m.archive.RemoveMarkers(drive); err != nil {
				m.fail(drive, err)
			} else {
				m.log.Info().Str("drive", drive).Msg("drive marker removed: no file references the drive")
			}
		}
		return nil
	}
	if !present {
		return nil // an absent drive's marker stays as it was
	}
	want := drives.Ready
	if st.Pending {
		want = drives.Pending
	}
	if ok && cur == want && !changed {
		return nil
	}
	if err := m.archive.SetMarker(drive, want, m.now().UTC()); err != nil {
		m.fail(drive, err)
		return nil
	}
	m.log.Info().Str("drive", drive).Str("state", string(want)).Msg("drive marker written")
	return nil
}

func (m *Markers) fail(drive string, err error) {
	m.errors++
	m.log.Warn().Str("drive", drive).Err(err).Msg("drive marker not written")
}
