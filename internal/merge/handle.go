package merge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/chunk"
	"github.com/homeindex/homeindex/internal/metadata"
	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/protocol"
)

// contentFile is the module's content, as the outbox reads it (outbox.ContentFile).
const contentFile = "content.json"

// Handle processes one raw payload that is in modules:done:processing: it merges, drops,
// fails or quarantines it, then removes it from there. On error the payload stays there and
// handling it again is safe: every step before the failure is idempotent.
func (m *Merger) Handle(ctx context.Context, raw string) error {
	if len(raw) > m.cfg.MaxPayload {
		return m.quarantine(ctx, raw, nil, fmt.Sprintf("payload too large: %d bytes, limit %d", len(raw), m.cfg.MaxPayload))
	}
	data := []byte(raw)
	top, err := scanPayload(data, scanLimits{maxDepth: m.cfg.MaxDepth, maxValues: m.cfg.MaxValues})
	if err != nil {
		return m.quarantine(ctx, raw, nil, "malformed payload: "+err.Error())
	}
	msg, err := protocol.ParseDone(data)
	if err != nil {
		return m.quarantine(ctx, raw, nil, err.Error())
	}
	if !m.configured(msg.Module) {
		m.stats.unknownModule.Add(1)
		m.log.Warn().Str("module", cut(msg.Module, 64)).Msg("result of an unknown module dropped")
		return m.ack(ctx, raw, nil)
	}
	info, err := msg.Item()
	if err != nil {
		return m.quarantine(ctx, raw, nil, fmt.Sprintf("module %s: document: %v", msg.Module, err))
	}
	if !metadata.ValidID(info.ID) {
		return m.quarantine(ctx, raw, nil, fmt.Sprintf("module %s: invalid document id %s", msg.Module, clip(info.ID, 80)))
	}
	if !info.HasJob {
		// Built by a core that is not us (no job fields): we cannot tell which job it answers.
		m.stats.stale.Add(1)
		m.log.Info().Str("module", msg.Module).Str("id", info.ID).Msg("result without job fields dropped")
		return m.ack(ctx, raw, nil)
	}
	ref := queue.JobRef{Module: msg.Module, ID: info.ID, Token: info.Job.Token, Attempt: info.Job.Attempt}
	// The token names the job; an echoed id that differs from the job's is a module trying to
	// set a core field: the id is ignored (and counted), the job's own id is used.
	if id, ok, err := m.cat.JobDocByToken(ctx, ref.Module, ref.Token); err != nil {
		return err
	} else if ok && id != ref.ID {
		m.stats.rejectedFields.Add(1)
		m.log.Warn().Str("module", ref.Module).Str("id", id).Str("echoed_id", clip(ref.ID, 80)).Msg("result echoed another id; the job's id is used")
		ref.ID = id
	}
	if msg.Error != "" || top.has(protocol.DoneErrorField) {
		// An empty reason is still a failure report: merging it would skip the module.
		if msg.Error == "" {
			msg.Error = "module reported a failure without a reason"
		}
		return m.fail(ctx, raw, data, msg, ref)
	}
	return m.merge(ctx, raw, msg, ref)
}

// merge applies a successful result.
func (m *Merger) merge(ctx context.Context, raw string, msg protocol.DoneMessage, ref queue.JobRef) error {
	in := catalog.MergeInput{DocID: ref.ID, Module: ref.Module, Token: ref.Token, Pipeline: m.cfg.Pipeline, At: time.Now()}
	live, err := m.cat.LiveJob(ctx, ref.ID, ref.Module, ref.Token)
	if err != nil {
		return err
	}
	// Only a current job's result writes files; otherwise Merge just tells a replay from a
	// stale result, changing nothing.
	if live {
		if msg.Content != nil {
			if _, err := chunk.ParseContent(msg.Content, chunk.DefaultLimits); err != nil {
				return m.reject(ctx, raw, ref, err.Error())
			}
		}
		fields, rejected, err := documentFields(msg)
		if err != nil {
			return m.reject(ctx, raw, ref, "document: "+err.Error())
		}
		if len(rejected) > 0 {
			m.stats.rejectedFields.Add(int64(len(rejected)))
			m.log.Warn().Str("module", ref.Module).Str("id", ref.ID).Strs("fields", rejected).
				Msg("fields named like core fields dropped")
		}
		in.Fields = fields
		if msg.Content != nil {
			// Before the commit: once `next` moves on, the outbox must find the file.
			if err := m.store.WriteModuleFile(ref.ID, ref.Module, contentFile, msg.Content); err != nil {
				return fmt.Errorf("merge %s/%s: %w", ref.ID, ref.Module, err)
			}
			in.Content = true
		}
	}
	out, err := m.cat.Merge(ctx, in)
	if err != nil {
		return err
	}
	switch out {
	case catalog.MergeApplied:
		m.stats.merged.Add(1)
		m.notify(ref.ID, ref.Module)
	case catalog.MergeReplayed:
		m.stats.replayed.Add(1)
		m.log.Debug().Str("module", ref.Module).Str("id", ref.ID).Msg("result replayed: already merged")
	default:
		m.stats.stale.Add(1)
		m.log.Info().Str("module", ref.Module).Str("id", ref.ID).Msg("stale result dropped")
	}
	if m.afterCommit != nil {
		if err := m.afterCommit(ref); err != nil {
			return err
		}
	}
	return m.ack(ctx, raw, &ref)
}

// reject quarantines a result of a current job whose content or document is unusable, and
// ends the attempt as failed so the job is retried (or parked) now rather than when the
// orphan sweep notices it.
func (m *Merger) reject(ctx context.Context, raw string, ref queue.JobRef, reason string) error {
	reason = fmt.Sprintf("module %s, id %s: %s", ref.Module, ref.ID, reason)
	out, err := m.q.Fail(ctx, ref, cut("result quarantined: "+reason, maxReason), m.cfg.Policy)
	if err != nil {
		return err
	}
	if out == queue.OutcomeParked {
		if _, err := m.recordPark(ctx, ref); err != nil {
			return err
		}
	}
	return m.quarantine(ctx, raw, &ref, reason)
}

// quarantine moves raw to modules:quarantine with the reason.
func (m *Merger) quarantine(ctx context.Context, raw string, ref *queue.JobRef, reason string) error {
	err := m.q.Quarantine(ctx, raw, reason)
	if errors.Is(err, queue.ErrNotPending) {
		m.log.Warn().Str("reason", reason).Msg("result to quarantine was not pending; ignored")
		return nil
	}
	if err != nil {
		return err
	}
	m.stats.quarantined.Add(1)
	ev := m.log.Warn().Str("reason", reason).Int("bytes", len(raw))
	if ref != nil {
		ev = ev.Str("module", ref.Module).Str("id", ref.ID)
	}
	ev.Msg("result quarantined")
	return nil
}

// ack removes raw from modules:done:processing, releasing ref's in-flight entry if it is the
// job's current attempt.
func (m *Merger) ack(ctx context.Context, raw string, ref *queue.JobRef) error {
	err := m.q.AckDone(ctx, raw, ref)
	if errors.Is(err, queue.ErrNotPending) {
		m.log.Warn().Msg("handled result was not pending; ignored")
		return nil
	}
	return err
}
