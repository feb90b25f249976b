package merge

import (
	"context"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/protocol"
)

// maxReason bounds a failure reason kept in Redis and the catalog: a module may send megabytes.
const maxReason = 1024

// fail handles a result carrying protocol.DoneErrorField: the attempt ends as failed, retried
// after the policy's backoff or parked; with protocol.DonePermanentField the job parks at once.
// The queue has no "park now" operation, so a permanent failure calls Fail with MaxAttempts
// equal to the attempt being failed, which parks it.
func (m *Merger) fail(ctx context.Context, raw string, data []byte, msg protocol.DoneMessage, ref queue.JobRef) error {
	reason := cut(msg.Error, maxReason)
	permanent := protocol.DonePermanent(data)
	policy := m.cfg.Policy
	if permanent {
		policy.MaxAttempts = max(ref.Attempt, 1)
	}
	out, err := m.q.Fail(ctx, ref, reason, policy)
	if err != nil {
		return err
	}
	parked := false
	if out == queue.OutcomeParked || out == queue.OutcomeStale {
		// Stale may be this very result replayed after a crash between Fail and Park.
		if parked, err = m.recordPark(ctx, ref); err != nil {
			return err
		}
	}
	switch {
	case out == queue.OutcomeStale && !parked:
		m.stats.stale.Add(1)
		m.log.Info().Str("module", ref.Module).Str("id", ref.ID).Msg("stale failure report dropped")
	case permanent:
		m.stats.permanent.Add(1)
	default:
		m.stats.failed.Add(1)
	}
	if out != queue.OutcomeStale {
		m.log.Info().Str("module", ref.Module).Str("id", ref.ID).Int("attempt", ref.Attempt).
			Bool("permanent", permanent).Stringer("outcome", out).Str("reason", reason).Msg("module reported a failure")
	}
	return m.ack(ctx, raw, &ref)
}

// recordPark records in the catalog a park the queue made for ref's job (just now, or before a
// crash), with the parked record's reason, attempts and time, so a replay writes the same
// bytes. It does nothing when the catalog already has it parked or the queue has no record
// of that dispatch.
func (m *Merger) recordPark(ctx context.Context, ref queue.JobRef) (bool, error) {
	j, ok, err := m.cat.Job(ctx, ref.ID, ref.Module)
	if err != nil || !ok || j.Token != ref.Token || j.State == catalog.JobParked {
		return false, err
	}
	rec, ok, err := m.q.FailedJobOf(ctx, ref.Module, ref.ID)
	if err != nil || !ok || rec.Token != ref.Token {
		return false, err
	}
	parked, err := m.cat.Park(ctx, ref.ID, ref.Module, ref.Token, rec.Attempts, rec.Reason, m.cfg.Pipeline, rec.FailedAt)
	if err != nil {
		return false, err
	}
	if parked {
		m.notify(ref.ID, ref.Module)
	}
	return parked, nil
}
