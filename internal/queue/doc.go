// Package queue is the daemon's only door to Redis: the module job queues, the reaper's
// scripts, the done queue, the daemon lock and the epoch. Key names come from package
// protocol (keys.go, pinned by its tests); every Lua script sits beside the Go method that
// runs it, under a comment giving its KEYS, ARGV and every return value. Scripts read time from
// the Redis server (TIME), never from the caller, so clock skew between hosts does not matter.
//
// Redis is a bus, not the system of record: everything here can be rebuilt from the catalog.
// Keys marked "ours" are additive to the Python runtime's protocol (docs/protocol.md).
//
// # Data model
//
//	key                          type  written by                     read by
//	<m>:check                    LIST  daemon (Push, retries: head)   workers (LPOP)
//	<m>:check:processing         LIST  workers (RPUSH with ZADD)      workers (LREM), reaper, sweep
//	<m>:run                      LIST  workers (RPUSH after check)    workers (BLPOP/BLMOVE)
//	<m>:run:processing           LIST  workers                        workers, reaper, sweep
//	timeouts                     ZSET  workers (ZADD/ZREM)            reaper
//	modules:done                 LIST  workers (RPUSH)                merger (NextDones: takeDoneScript)
//	modules:done:processing      LIST  NextDones (ours)               AckDone(s), Quarantine, RestoreDone
//	modules:quarantine           LIST  Quarantine (ours)              operators, status, TrimQuarantine
//	homeindex:quarantine:dropped STR   TrimQuarantine (ours)          QuarantineCounts
//	<m>:failed                   HASH  reaper, sweep, Fail (ours)     Failed, RetryFailed, PurgeUID, Push
//	homeindex:<m>:jobs           HASH  Push, retries (ours)           every script below
//	homeindex:<m>:retry          ZSET  retries (ours)                 Reap (promote), Withdraw, sweep
//	homeindex:<m>:suspects       ZSET  SweepOrphans (ours)            SweepOrphans
//	homeindex:lock               STR   AcquireLock/RenewLock (ours)   standby daemons
//	homeindex:epoch              STR   Epoch (ours)                   Epoch
//
// Field by field:
//   - <m>:check, <m>:run: items waiting, head first. :check is the dispatch window's intake;
//     a worker moves an item to :run when check() is true.
//   - <m>:check:processing, <m>:run:processing: items a worker holds, each with a timeouts
//     member protocol.TimeoutMember(queue, item) scored by its deadline (epoch seconds, float,
//     the worker's clock + TIMEOUT: Python's time.time()).
//   - homeindex:<m>:jobs: document id → the exact string of the job's current attempt. One
//     entry per (document, module) job in flight, from Push until the merger acks its result
//     (AckDone with its JobRef), it is withdrawn, purged or parked. Push skips ids present, so
//     a job is never queued twice; every state change below checks that the item it acts on
//     is still this entry, so stale copies never act.
//   - homeindex:<m>:retry: protocol.RetryMember(phase, item) → when (epoch ms) the next attempt
//     goes back to the head of its phase's queue.
//   - <m>:failed: document id → JSON {"id", "module", "phase", "item", "reason", "attempts",
//     "failed_at" (epoch ms)}: parked jobs. A parked job is not in flight (no jobs entry).
//   - homeindex:<m>:suspects: "p|<item>" (in a processing list without a deadline) or
//     "l|<item>" (in no list) → when a sweep first saw it so (epoch ms).
//   - modules:quarantine: JSON QuarantineRecord {"reason", "payload", "at"}, oldest at the
//     head; TrimQuarantine keeps the newest FAILED_MAX × modules and adds the rest to
//     homeindex:quarantine:dropped (a counter).
//   - homeindex:lock: the active daemon's owner token, PX TTL, renewed.
//   - homeindex:epoch: a random token written when missing; a changed value means Redis lost
//     its data and the catalog must dispatch again every job it had in flight.
//
// # Item
//
// An item is the document JSON, then "uid" (when the module has one), then the job fields
// (protocol.BuildItem), all ASCII:
//
//	{"id":"…","paths":{"available/first.jpg":…},…,"uid":"…","_hi_job":"<token>","_hi_attempt":1,"_hi_since":<ms>}
//
// _hi_job is the dispatch token the catalog keeps; _hi_attempt makes each attempt a distinct
// string, so a late worker of an old attempt finds its timeouts member gone and drops its
// result, as upstream workers do; _hi_since is the first dispatch time. Modules echo these
// fields in the result's document; RefOf reads them back as a JobRef.
//
// # Transitions
//
//	Push             → :check (tail, or head for a drive that appeared); jobs[id] = item
//	worker check     :check → :check:processing + timeouts → :run, or → modules:done
//	worker run       :run → :run:processing + timeouts → modules:done
//	Withdraw         :check / :run / retry → gone; jobs entry deleted (not started only)
//	Reap (expired)   still expired by TIME and still in :processing → failed attempt
//	SweepOrphans     in :processing without deadline, or in no list, for grace → failed attempt
//	Fail             module-reported error (done message with _hi_error) → failed attempt
//	failed attempt   attempt < MaxAttempts: jobs[id] = next attempt; head of its queue after
//	                 RetryPolicy.Delay (via retry, promoted by Reap); else → <m>:failed
//	RetryFailed      <m>:failed → tail of :check, new token, attempt 1
//	NextDones        modules:done → modules:done:processing, up to a batch and a byte budget;
//	                 results over the size cap → modules:quarantine inside Redis (LINDEX,
//	                 LPOP, LMOVE in takeDoneScript); polls while empty
//	NextDone         one result by BLMOVE (tests and tools; the merger uses NextDones)
//	AckDone          modules:done:processing → gone, after the catalog commit; jobs entry
//	                 released if the result's JobRef is the current attempt
//	Quarantine       modules:done:processing → modules:quarantine with the reason
//	RestoreDone      modules:done:processing → head of modules:done (replay leftovers)
//	PurgeUID, Reap   waiting items of another uid or without job fields → dropped, reported
//
// A timed-out attempt is retried in the phase it timed out in (run is not re-checked). Lost
// jobs (in no list) restart at check.
//
// # Worker requirements (for the SDK)
//
// A worker may hold an item outside every Redis list only for a moment (LPOP then MULTI
// ZADD+RPUSH, as upstream does): one held longer is treated as lost after the grace period.
// It writes timeouts members exactly as protocol.TimeoutMember does. To report a failure it
// pushes its done message with protocol.DoneErrorField set; the daemon calls Fail.
//
// # Not supported
//
// Redis Cluster: the reaper's scripts touch keys of the module named in each timeouts member,
// and keys of several modules share one script batch; one Redis (optionally with replicas) is
// assumed.
package queue
