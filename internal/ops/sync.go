package ops

import (
	"context"

	"github.com/homeindex/homeindex/internal/filesync"
)

// SyncRequest is the body of POST /api/sync. Wait (default true) answers once the sync has
// finished, with its summary; false answers at once.
type SyncRequest struct {
	Wait *bool `json:"wait"`
}

// SyncAnswer is the answer of POST /api/sync.
type SyncAnswer struct {
	// Started: a sync was started, or queued behind the one running.
	Started bool `json:"started"`
	// Finished: the answer waited for that sync; Sync is its summary (Sync.Error says when it
	// failed).
	Finished bool                 `json:"finished"`
	Sync     *filesync.SyncRecord `json:"sync"`
}

// Sync asks the scheduler for a sync now (after the running one, if any).
func (s *Service) Sync(ctx context.Context, req SyncRequest) (*SyncAnswer, error) {
	if s.cfg.RequestSync == nil || s.cfg.TriggerSync == nil {
		return nil, errorf(KindUnavailable, "this process runs no scheduler")
	}
	if req.Wait != nil && !*req.Wait {
		s.cfg.TriggerSync("requested")
		return &SyncAnswer{Started: true}, nil
	}
	if err := s.cfg.RequestSync(ctx); err != nil && ctx.Err() != nil {
		return nil, err
	}
	last, _, _ := s.cfg.Files.LastSync(ctx)
	return &SyncAnswer{Started: true, Finished: true, Sync: last}, nil
}
