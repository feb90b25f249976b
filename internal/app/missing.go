package app

import (
	"context"
	"time"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/filesync"
)

// purgeBatch is how many expired missing documents one purge transaction removes.
const purgeBatch = 500

// PurgeMissing removes the documents missing for longer than MISSING_RETENTION (their catalog
// rows now, their by-id directories through the outbox), in transactions of purgeBatch. It
// returns how many it purged.
func (a *App) PurgeMissing(ctx context.Context, now time.Time) (int, error) {
	before := now.Add(-a.Config.Missing.Retention)
	total := 0
	for {
		ids, err := a.Catalog.PurgeMissing(ctx, before, purgeBatch)
		total += len(ids)
		if err != nil {
			return total, err
		}
		if len(ids) > 0 {
			a.Outbox.Wake()
		}
		if len(ids) < purgeBatch {
			break
		}
	}
	if total > 0 {
		a.Log.Info().Int("documents", total).Dur("retention", a.Config.Missing.Retention).
			Msg("purged missing documents past their retention (catalog rows and by-id directories)")
	}
	return total, nil
}

// PurgeEvery is how often RunPurge looks for expired missing documents: a tenth of the
// retention, between one second and one hour.
func (a *App) PurgeEvery() time.Duration {
	return min(max(a.Config.Missing.Retention/10, time.Second), time.Hour)
}

// RunPurge purges expired missing documents every PurgeEvery until ctx ends. A failed pass is
// logged and retried on the next tick.
func (a *App) RunPurge(ctx context.Context) error {
	t := time.NewTicker(a.PurgeEvery())
	defer t.Stop()
	for {
		if _, err := a.PurgeMissing(ctx, time.Now()); err != nil && ctx.Err() == nil {
			a.Log.Warn().Err(err).Msg("purge of missing documents failed; retried later")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// ConfirmMissing records the operator's confirmation: the next sync carries out the removals
// it would hold (a mass removal, or the files of emptied directories).
func (a *App) ConfirmMissing(ctx context.Context) error {
	if err := a.Catalog.ConfirmMissing(ctx, time.Now()); err != nil {
		return err
	}
	a.Log.Info().Msg("missing files confirmed by the operator; the next sync removes them")
	return nil
}

// Missing reads the missing-files state: counts from the catalog, the last sync's report from
// this process or, before its first sync, from the catalog.
func (a *App) Missing(ctx context.Context) (filesync.MissingState, error) {
	st := filesync.MissingState{Retention: a.Config.Missing.Retention}
	var err error
	if st.Documents, err = a.Catalog.CountMissing(ctx); err != nil {
		return st, err
	}
	if st.Purged, err = a.Catalog.MetaInt(ctx, catalog.MetaMissingPurged); err != nil {
		return st, err
	}
	if _, st.Confirm, err = a.Catalog.Meta(ctx, catalog.MetaMissingConfirm); err != nil {
		return st, err
	}
	if st.Report = a.Syncer.Report(); st.Report == nil {
		var r filesync.MissingReport
		ok, err := a.Catalog.MetaJSON(ctx, catalog.MetaMissingReport, &r)
		if err != nil {
			return st, err
		}
		if ok {
			st.Report = &r
		}
	}
	return st, nil
}
