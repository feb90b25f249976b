package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/ops"
)

// maxDriveSeries bounds the drives given their own series: drives are physical disks, a
// handful in practice; beyond this they are counted only in homeindex_drives.
const maxDriveSeries = 64

// scrapeTimeout bounds the catalog and Redis reads of one scrape.
const scrapeTimeout = 25 * time.Second

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("homeindex_"+name, help, labels, nil)
}

// Every metric the collector exports. Labels are bounded: module (MODULES), state and outcome
// (fixed sets), drive (archive drive names, at most maxDriveSeries). No paths, ids or secrets.
var (
	mBuild          = desc("build_info", "Always 1; the version label says which build runs.", "version")
	mUp             = desc("redis_up", "1 when the last Redis command reached Redis, 0 when it did not; absent without modules.")
	mRedisErrors    = desc("redis_errors_total", "Redis commands and dials that failed for want of a connection.")
	mDocuments      = desc("documents", "Documents in the catalog by state (live: indexed; retired: content gone, module output kept).", "state")
	mFiles          = desc("files", "Paths in the catalog.")
	mQueue          = desc("queue_jobs", "Jobs per module and state: waiting (catalog, not dispatched), waiting_offline (drive absent), recovering (dispatched, not in Redis: re-dispatched after a crash), queued and retrying (in Redis, not started), in_flight (held by a worker), merging (result awaiting merge), parked (failed MAX_ATTEMPTS times).", "module", "state")
	mDone           = desc("module_done_documents", "Live documents past the module in the chain (merged or skipped), not parked in it.", "module")
	mOldest         = desc("queue_oldest_waiting_seconds", "Age of the oldest job waiting in the module's Redis queues, since its first dispatch (0 when none waits).", "module")
	mPaused         = desc("module_paused", "1 when the module is paused (no new dispatches).", "module")
	mFinished       = desc("module_jobs_finished_total", "Jobs the merger finished for the module since start (merged, or parked on a module-reported failure).", "module")
	mParkedDropped  = desc("parked_dropped_total", "Parked jobs dropped by the FAILED_MAX bound (persisted across restarts).", "module")
	mResults        = desc("results_total", "Module results the merger handled, by outcome: merged, replayed (merged before), stale (job no longer current), unknown_module, quarantined (malformed), failed (module-reported error, retried or parked), permanent (parked at once).", "outcome")
	mRejectedFields = desc("rejected_fields_total", "Result fields dropped because they named core fields.")
	mReaper         = desc("reaper_jobs_total", "Reaper actions by outcome: requeued (timed out, back at once), retrying (timed out, waiting for backoff), promoted (backoff over), parked (attempts used up), dropped (not ours or of another uid), orphaned (lost by a worker).", "outcome")
	mDispatched     = desc("dispatched_jobs_total", "Jobs pushed to module queues.")
	mWithdrawn      = desc("withdrawn_jobs_total", "Jobs taken back before they started (drive unplugged, drive plugged in first).")
	mQuarantine     = desc("quarantined_results", "Results kept in modules:quarantine.")
	mQuarantineDrop = desc("quarantine_dropped_total", "Quarantined results dropped by the bound.")
	mSyncs          = desc("syncs_total", "Syncs finished since start, by result (ok, error).", "result")
	mSyncRunning    = desc("sync_running", "1 while a sync runs.")
	mSyncDuration   = desc("sync_last_duration_seconds", "Duration of the last finished sync.")
	mSyncTime       = desc("sync_last_end_timestamp_seconds", "When the last sync finished, Unix time.")
	mSyncFiles      = desc("sync_last_files", "Counts of the last finished sync by kind: walked, hashed, unchanged, added, modified, deleted, kept_offline, errors.", "kind")
	mSyncBytes      = desc("sync_last_hashed_bytes", "Bytes hashed by the last finished sync.")
	mSyncWalked     = desc("sync_progress_files", "Running sync: files walked and hashed so far.", "kind")
	mOutbox         = desc("outbox_pending_keys", "Catalog changes not yet applied to the metadata directory or the index.")
	mIndexLag       = desc("index_lag_keys", "Catalog changes not yet applied to the search index.")
	mDrives         = desc("drives", "Archive drives by presence.", "state")
	mDrivePresent   = desc("drive_present", "1 when the drive is present (its directory exists and is not empty).", "drive")
	mDriveState     = desc("drive_state", "1 for the drive's state, 0 for the others: pending (files wait for a module), ready, ready_with_failures (nothing waits, a module parked some files). The marker file keeps pending and ready only.", "drive", "state")
	mDriveFiles     = desc("drive_files", "Paths on the drive by state: pending (a module is due), done, failed (a module parked it).", "drive", "state")
	mMissingDocs    = desc("missing_documents", "Documents whose files all disappeared: out of the index, by-id directory kept until MISSING_RETENTION ends.")
	mMissingPurged  = desc("missing_purged_total", "Missing documents purged after MISSING_RETENTION (persisted across restarts).")
	mHeldDirs       = desc("held_directories", "Directories (the files root included) the last sync found empty or unreadable while indexed files lay below: their files are kept, not removed.", "reason")
	mHeldFiles      = desc("held_files", "Paths the last sync kept although not found, by why: held_directory (below an empty or unreadable directory), hold (the mass-removal hold).", "why")
	mMissingHold    = desc("missing_hold", "1 while a mass removal is held until the operator confirms it (homeindexd sync --confirm-missing, POST /api/missing/confirm).")
	mScrapeErrors   = desc("scrape_errors", "1 when part of this scrape could not be read (see the daemon's log and /api/status errors).")
)

// collector reads everything at scrape time from the ops service: no counters are kept here.
type collector struct {
	svc *ops.Service
	log zerolog.Logger
}

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{mBuild, mUp, mRedisErrors, mDocuments, mFiles, mQueue, mDone, mOldest, mPaused,
		mFinished, mParkedDropped, mResults, mRejectedFields, mReaper, mDispatched, mWithdrawn, mQuarantine, mQuarantineDrop,
		mSyncs, mSyncRunning, mSyncDuration, mSyncTime, mSyncFiles, mSyncBytes, mSyncWalked, mOutbox, mIndexLag, mDrives,
		mDrivePresent, mDriveState, mDriveFiles, mScrapeErrors, mMissingDocs, mMissingPurged, mHeldDirs, mHeldFiles, mMissingHold} {
		ch <- d
	}
	for _, d := range watchDescs {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	st, err := c.svc.Status(ctx)
	if err != nil {
		c.log.Warn().Err(err).Msg("metrics: status not read")
		gauge(mScrapeErrors, 1)
		return
	}
	cn := c.svc.Counters(ctx)
	scrapeErr := 0.0
	if len(st.Errors) > 0 {
		scrapeErr = 1
	}
	gauge(mScrapeErrors, scrapeErr)
	gauge(mBuild, 1, st.Version)
	if st.Pipeline.State != ops.PipelineOff {
		up := 0.0
		if st.Pipeline.State == ops.PipelineActive {
			up = 1
		}
		gauge(mUp, up)
		counter(mRedisErrors, float64(cn.RedisErrors))
	}
	gauge(mDocuments, float64(st.Documents.Live), "live")
	gauge(mDocuments, float64(st.Documents.Retired), "retired")
	gauge(mFiles, float64(st.Documents.Files))
	for _, m := range st.Modules {
		for state, v := range map[string]int64{"waiting": m.Waiting, "waiting_offline": m.WaitingOffline, "recovering": m.Recovering, "queued": m.Queued - m.Retrying,
			"retrying": m.Retrying, "in_flight": m.InFlight, "merging": m.Merging, "parked": m.Parked} {
			gauge(mQueue, float64(v), m.Name, state)
		}
		gauge(mDone, float64(m.Done), m.Name)
		oldest := 0.0
		if m.OldestWaitingSeconds != nil {
			oldest = *m.OldestWaitingSeconds
		}
		gauge(mOldest, oldest, m.Name)
		paused := 0.0
		if m.Paused {
			paused = 1
		}
		gauge(mPaused, paused, m.Name)
		counter(mFinished, float64(cn.Finished[m.Name]), m.Name)
		counter(mParkedDropped, float64(m.ParkedDropped), m.Name)
	}
	if st.Pipeline.State != ops.PipelineOff {
		ms := cn.Merge
		for outcome, v := range map[string]int64{"merged": ms.Merged, "replayed": ms.Replayed, "stale": ms.Stale,
			"unknown_module": ms.UnknownModule, "quarantined": ms.Quarantined, "failed": ms.Failed, "permanent": ms.Permanent} {
			counter(mResults, float64(v), outcome)
		}
		counter(mRejectedFields, float64(ms.RejectedFields))
		rs := cn.Reap
		for outcome, v := range map[string]int64{"requeued": rs.Requeued, "retrying": rs.Retrying, "promoted": rs.Promoted,
			"parked": rs.Parked, "dropped": rs.Dropped, "orphaned": rs.Orphans} {
			counter(mReaper, float64(v), outcome)
		}
		counter(mDispatched, float64(cn.Dispatched))
		counter(mWithdrawn, float64(cn.Withdrawn))
		gauge(mQuarantine, float64(st.Quarantine.Count))
		counter(mQuarantineDrop, float64(st.Quarantine.Dropped))
	}
	counter(mSyncs, float64(cn.Syncs-cn.SyncsFailed), "ok")
	counter(mSyncs, float64(cn.SyncsFailed), "error")
	running := 0.0
	if st.Sync.Running {
		running = 1
		gauge(mSyncWalked, float64(st.Sync.Progress.Walked), "walked")
		gauge(mSyncWalked, float64(st.Sync.Progress.Hashed), "hashed")
	}
	gauge(mSyncRunning, running)
	if l := st.Sync.Last; l != nil {
		gauge(mSyncDuration, l.Stats.Duration.Seconds())
		gauge(mSyncTime, float64(l.Finished.UnixMilli())/1e3)
		s := l.Stats
		for kind, v := range map[string]int{"walked": s.Walked, "hashed": s.Hashed, "unchanged": s.Unchanged, "added": s.Added,
			"modified": s.Modified, "deleted": s.Deleted, "kept_offline": s.KeptOffline, "errors": s.Errors} {
			gauge(mSyncFiles, float64(v), kind)
		}
		gauge(mSyncBytes, float64(s.HashedBytes))
	}
	gauge(mOutbox, float64(st.Index.OutboxPending))
	gauge(mIndexLag, float64(st.Index.IndexPending))
	present, absent := 0, 0
	for i, d := range st.Drives {
		if d.Present {
			present++
		} else {
			absent++
		}
		if i >= maxDriveSeries {
			continue
		}
		p := 0.0
		if d.Present {
			p = 1
		}
		gauge(mDrivePresent, p, d.Name)
		for _, state := range []string{ops.DrivePending, ops.DriveReady, ops.DriveReadyWithFailures} {
			v := 0.0
			if d.State == state {
				v = 1
			}
			gauge(mDriveState, v, d.Name, state)
		}
		gauge(mDriveFiles, float64(d.Pending), d.Name, "pending")
		gauge(mDriveFiles, float64(d.Done), d.Name, "done")
		gauge(mDriveFiles, float64(d.Failed), d.Name, "failed")
	}
	gauge(mDrives, float64(present), "present")
	gauge(mDrives, float64(absent), "absent")
	collectMissing(st.Missing, gauge, counter)
	collectWatch(st, gauge, counter)
}

// collectMissing exports missing documents, held directories and the mass-removal hold.
func collectMissing(m ops.MissingStatus, gauge, counter func(d *prometheus.Desc, v float64, labels ...string)) {
	gauge(mMissingDocs, float64(m.Documents))
	counter(mMissingPurged, float64(m.PurgedTotal))
	gauge(mHeldDirs, float64(m.HeldTotal-m.HeldUnreadable), "empty")
	gauge(mHeldDirs, float64(m.HeldUnreadable), "unreadable")
	gauge(mHeldFiles, float64(m.HeldFiles), "held_directory")
	hold, holdPaths := 0.0, 0.0
	if m.Hold != nil {
		hold, holdPaths = 1, float64(m.Hold.Paths)
	}
	gauge(mHeldFiles, holdPaths, "hold")
	gauge(mMissingHold, hold)
}

// NewRegistry returns a registry with the daemon's collector and the Go and process
// collectors.
func NewRegistry(svc *ops.Service, log zerolog.Logger) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{svc: svc, log: log},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

func metricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
