package ops

import (
	"context"

	"github.com/homeindex/homeindex/internal/filesync"
)

// MissingStatus is what status says about missing files, held directories and the
// mass-removal hold. docs/api.md describes every field.
type MissingStatus struct {
	// Documents are missing: their files disappeared, they left the index, their by-id
	// directories stay until the purge after RetentionSeconds.
	Documents        int64   `json:"documents"`
	RetentionSeconds float64 `json:"retention_seconds"`
	PurgedTotal      int64   `json:"purged_total"`
	// Held names the directories (the files root is ".") found empty or unreadable by the
	// last sync whose indexed files were kept; HeldTotal counts them all (Held shows the first
	// 100), HeldFiles the paths kept below them.
	Held      []filesync.HeldDir `json:"held"`
	HeldTotal int                `json:"held_total"`
	HeldFiles int                `json:"held_files"`
	// HeldUnreadable is how many of HeldTotal were unreadable (the others were empty).
	HeldUnreadable int `json:"held_unreadable"`
	// Hold is the mass removal the last sync held back, or null.
	Hold *filesync.Hold `json:"hold"`
	// ConfirmPending is true between a confirmation and the sync that carries it out.
	ConfirmPending bool `json:"confirm_pending"`
}

func (s *Service) missingStatus(ctx context.Context, st *Status) error {
	m, err := s.cfg.Files.Missing(ctx)
	if err != nil {
		return err
	}
	st.Missing = MissingStatus{Documents: m.Documents, RetentionSeconds: m.Retention.Seconds(), PurgedTotal: m.Purged,
		ConfirmPending: m.Confirm, Held: []filesync.HeldDir{}}
	if r := m.Report; r != nil {
		for _, h := range r.HeldDirs {
			if h.Dir == "" {
				h.Dir = "."
			}
			st.Missing.Held = append(st.Missing.Held, h)
		}
		st.Missing.HeldTotal, st.Missing.HeldFiles, st.Missing.Hold = r.HeldTotal, r.HeldFiles, r.Hold
		st.Missing.HeldUnreadable = r.HeldUnreadable
	}
	return nil
}

// ConfirmResult answers a confirmation of held removals.
type ConfirmResult struct {
	Confirmed bool `json:"confirmed"`
	// HeldPaths is how many paths the last sync held (by the hold or below emptied
	// directories); the sync that follows removes them if they are still gone.
	HeldPaths int    `json:"held_paths"`
	Sync      string `json:"sync"` // "requested" when a sync was asked for, else "next"
}

// ConfirmMissing records the operator's confirmation of the held removals (the mass-removal
// hold, and the files below emptied directories) and asks for a sync that carries them out.
func (s *Service) ConfirmMissing(ctx context.Context) (*ConfirmResult, error) {
	m, err := s.cfg.Files.Missing(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.cfg.Files.ConfirmMissing(ctx); err != nil {
		return nil, err
	}
	res := &ConfirmResult{Confirmed: true, Sync: "next"}
	if r := m.Report; r != nil {
		res.HeldPaths = r.HeldFiles
		if r.Hold != nil {
			res.HeldPaths += r.Hold.Paths
		}
	}
	if s.cfg.TriggerSync != nil {
		s.cfg.TriggerSync("missing files confirmed")
		res.Sync = "requested"
	}
	return res, nil
}
