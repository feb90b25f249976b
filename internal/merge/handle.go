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
	return m.HandleBatch(ctx, []string{raw})
}

// HandleBatch is Handle for several payloads, in order. Malformed payloads and results that
// name no job are dealt with as they are parsed; the jobs the others answer are looked up with
// one catalog query per module; failure reports end their attempts; the successful results are
// merged in one catalog transaction and acknowledged in one pipeline, which is what lets one
// merger keep up with many module workers. On error, the payloads not yet acknowledged stay in
// modules:done:processing and handling them again is safe.
func (m *Merger) HandleBatch(ctx context.Context, raws []string) error {
	var results []parsed
	tokens := map[string][]string{} // module → tokens to look up
	for _, raw := range raws {
		r, ok, err := m.parse(ctx, raw)
		if err != nil {
			return err
		}
		if ok {
			results = append(results, r)
			tokens[r.ref.Module] = append(tokens[r.ref.Module], r.ref.Token)
		}
	}
	jobs := map[string]map[string]catalog.JobByToken{}
	for module, list := range tokens {
		found, err := m.cat.JobsByToken(ctx, module, list)
		if err != nil {
			return err
		}
		jobs[module] = found
	}
	var batch []pending
	for _, r := range results {
		p, ok, err := m.act(ctx, r, jobs[r.ref.Module])
		if err != nil {
			return err
		}
		if ok {
			batch = append(batch, p)
		}
	}
	return m.commit(ctx, batch)
}

// parsed is a well-formed result of a configured module that names its job.
type parsed struct {
	raw  string
	data []byte
	top  keySet
	msg  protocol.DoneMessage
	ref  queue.JobRef
}

// pending is a successful result ready to merge.
type pending struct {
	raw string
	ref queue.JobRef
	in  catalog.MergeInput
}

// parse validates one payload. A result of a configured module naming its job comes back (ok);
// anything else is quarantined or dropped here.
func (m *Merger) parse(ctx context.Context, raw string) (r parsed, ok bool, err error) {
	if len(raw) > m.cfg.MaxPayload {
		return r, false, m.quarantine(ctx, raw, nil, fmt.Sprintf("payload too large: %d bytes, limit %d", len(raw), m.cfg.MaxPayload))
	}
	data := []byte(raw)
	top, err := scanPayload(data, scanLimits{maxDepth: m.cfg.MaxDepth, maxValues: m.cfg.MaxValues})
	if err != nil {
		return r, false, m.quarantine(ctx, raw, nil, "malformed payload: "+err.Error())
	}
	msg, err := protocol.ParseDone(data)
	if err != nil {
		return r, false, m.quarantine(ctx, raw, nil, err.Error())
	}
	if !m.configured(msg.Module) {
		m.stats.unknownModule.Add(1)
		m.log.Warn().Str("module", cut(msg.Module, 64)).Msg("result of an unknown module dropped")
		return r, false, m.ack(ctx, raw, nil)
	}
	info, err := msg.Item()
	if err != nil {
		return r, false, m.quarantine(ctx, raw, nil, fmt.Sprintf("module %s: document: %v", msg.Module, err))
	}
	if !metadata.ValidID(info.ID) {
		return r, false, m.quarantine(ctx, raw, nil, fmt.Sprintf("module %s: invalid document id %s", msg.Module, clip(info.ID, 80)))
	}
	if !info.HasJob {
		// Built by a core that is not us (no job fields): we cannot tell which job it answers.
		m.stats.stale.Add(1)
		m.log.Info().Str("module", msg.Module).Str("id", info.ID).Msg("result without job fields dropped")
		return r, false, m.ack(ctx, raw, nil)
	}
	ref := queue.JobRef{Module: msg.Module, ID: info.ID, Token: info.Job.Token, Attempt: info.Job.Attempt}
	return parsed{raw: raw, data: data, top: top, msg: msg, ref: ref}, true, nil
}

// act handles a parsed result given the module's jobs by token: a failure report ends its
// attempt; a success comes back (ok) for commit, its content written when its job is current.
func (m *Merger) act(ctx context.Context, r parsed, jobs map[string]catalog.JobByToken) (pending, bool, error) {
	ref := r.ref
	job, known := jobs[ref.Token]
	// The token names the job; an echoed id that differs from the job's is a module trying to
	// set a core field: the id is ignored (and counted), the job's own id is used.
	if known && job.DocID != ref.ID {
		m.stats.rejectedFields.Add(1)
		m.log.Warn().Str("module", ref.Module).Str("id", job.DocID).Str("echoed_id", clip(ref.ID, 80)).Msg("result echoed another id; the job's id is used")
		ref.ID = job.DocID
	}
	msg := r.msg
	if msg.Error != "" || r.top.has(protocol.DoneErrorField) {
		// An empty reason is still a failure report: merging it would skip the module.
		if msg.Error == "" {
			msg.Error = "module reported a failure without a reason"
		}
		return pending{}, false, m.fail(ctx, r.raw, r.data, msg, ref)
	}
	return m.mergeInput(ctx, r.raw, msg, ref, known && job.Live)
}

// mergeInput builds the catalog input of a successful result. Only a current job's result is
// checked and writes files; for any other the commit just tells a replay from a stale result,
// changing nothing.
func (m *Merger) mergeInput(ctx context.Context, raw string, msg protocol.DoneMessage, ref queue.JobRef, live bool) (pending, bool, error) {
	p := pending{raw: raw, ref: ref,
		in: catalog.MergeInput{DocID: ref.ID, Module: ref.Module, Token: ref.Token, Pipeline: m.cfg.Pipeline, At: time.Now()}}
	if !live {
		return p, true, nil
	}
	if msg.Content != nil {
		if _, err := chunk.ParseContent(msg.Content, chunk.DefaultLimits); err != nil {
			return p, false, m.reject(ctx, raw, ref, err.Error())
		}
	}
	fields, rejected, err := documentFields(msg)
	if err != nil {
		return p, false, m.reject(ctx, raw, ref, "document: "+err.Error())
	}
	if len(rejected) > 0 {
		m.stats.rejectedFields.Add(int64(len(rejected)))
		m.log.Warn().Str("module", ref.Module).Str("id", ref.ID).Strs("fields", rejected).
			Msg("fields named like core fields dropped")
	}
	p.in.Fields = fields
	if msg.Content != nil {
		// Before the commit: once `next` moves on, the outbox must find the file.
		if err := m.store.WriteModuleFile(ref.ID, ref.Module, contentFile, msg.Content); err != nil {
			return p, false, fmt.Errorf("merge %s/%s: %w", ref.ID, ref.Module, err)
		}
		p.in.Content = true
	}
	return p, true, nil
}

// commit merges a batch of results in one catalog transaction, then acknowledges them.
func (m *Merger) commit(ctx context.Context, batch []pending) error {
	if len(batch) == 0 {
		return nil
	}
	ins := make([]catalog.MergeInput, len(batch))
	for i, p := range batch {
		ins[i] = p.in
	}
	outs, err := m.cat.MergeBatch(ctx, ins)
	if err != nil {
		return err
	}
	acks := make([]queue.Ack, len(batch))
	for i, out := range outs {
		ref := batch[i].ref
		switch out {
		case catalog.MergeApplied:
			m.stats.merged.Add(1)
			m.log.Debug().Str("module", ref.Module).Str("id", ref.ID).Int("attempt", ref.Attempt).Msg("result merged")
			m.notify(ref.ID, ref.Module)
		case catalog.MergeReplayed:
			m.stats.replayed.Add(1)
			m.log.Debug().Str("module", ref.Module).Str("id", ref.ID).Msg("result replayed: already merged")
		default:
			m.stats.stale.Add(1)
			m.log.Info().Str("module", ref.Module).Str("id", ref.ID).Msg("stale result dropped")
		}
		acks[i] = queue.Ack{Raw: batch[i].raw, Ref: &batch[i].ref}
	}
	if m.afterCommit != nil {
		for _, p := range batch {
			if err := m.afterCommit(p.ref); err != nil {
				return err
			}
		}
	}
	errs, err := m.q.AckDones(ctx, acks)
	if err != nil {
		return err
	}
	for _, err := range errs {
		if errors.Is(err, queue.ErrNotPending) {
			m.log.Warn().Msg("handled result was not pending; ignored")
		} else if err != nil {
			return err
		}
	}
	return nil
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
