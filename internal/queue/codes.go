package queue

import "github.com/redis/go-redis/v9"

// Script return codes. Lua scripts answer with small integers whose meaning is the script's
// own: 0 means "the worker finished first" to the reaper and "not lost" to the sweep, and -1
// means "renewed" in one and "protected by a deadline" in the other. Each script's codes are
// named here, next to each other, and the Go code compares replies only with these names.
// codes_test.go pins every integer literal a script returns to this list.
//
// Scripts that end an attempt as failed share retry_or_park (luaRetryOrPark), whose replies
// are the Outcome values: OutcomeRequeued (1), OutcomeRetrying (2), OutcomeParked (3).

// requeueExpiredScript and dropExpiredScript (reap.go), besides retry_or_park's Outcomes.
const (
	expiredGone       int64 = 0  // the timeouts member is gone: the worker finished first
	expiredRenewed    int64 = -1 // the deadline is in the future again: the lease was renewed
	expiredNotInList  int64 = -2 // member removed; the item had already left its processing list
	expiredNotCurrent int64 = -3 // item removed; it was not the job's current attempt (dropped)
	expiredDropped    int64 = 1  // dropExpiredScript only: member and item removed, no retry
)

// reapOrphanScript and reapLostScript (sweep.go), besides retry_or_park's Outcomes.
const (
	sweepNotOrphan   int64 = 0  // the item left its list (orphan), or the job is not lost
	sweepProtected   int64 = -1 // orphan only: the item has a deadline now
	sweepSuspect     int64 = -2 // grace not over: first seen is remembered
	sweepDropped     int64 = -3 // orphan only: removed without a retry (not ours, or stale)
	sweepAwaitsMerge int64 = -4 // lost only: grace over, but results wait to be merged
)

// ackDoneScript (done.go).
const (
	ackNotPending int64 = 0 // the result was not in modules:done:processing: nothing done
	ackRemoved    int64 = 1 // removed
	ackReleased   int64 = 2 // removed, and the job's in-flight entry deleted
)

// quarantineScript (done.go).
const (
	quarantineNotPending int64 = 0 // the result was not in modules:done:processing
	quarantineMoved      int64 = 1 // moved to modules:quarantine
)

// retryFailedScript (fail.go). failAttemptScript answers OutcomeStale (0) or an Outcome.
const (
	retryFailedChanged    int64 = 0  // the parked record changed or went away: nothing done
	retryFailedQueued     int64 = 1  // queued at the tail of <m>:check
	retryFailedDispatched int64 = -1 // dispatched anew meanwhile: record deleted, nothing queued
)

// acquireLockScript, takeOverLockScript and releaseLockScript (lock.go).
const (
	lockRefused int64 = 0 // another owner holds the lock (or the token did not match)
	lockDone    int64 = 1 // taken, extended or released
)

// scriptCodes lists, for each script answering integer codes, every integer literal its Lua
// source returns (the pin test checks both directions). Scripts answering counts list the
// zero they return when there is nothing to do.
var scriptCodes = map[*redis.Script][]int64{
	requeueExpiredScript: {expiredGone, expiredRenewed, expiredNotInList, expiredNotCurrent,
		int64(OutcomeRequeued), int64(OutcomeRetrying), int64(OutcomeParked)},
	dropExpiredScript: {expiredGone, expiredRenewed, expiredDropped},
	reapOrphanScript: {sweepNotOrphan, sweepProtected, sweepSuspect, sweepDropped,
		int64(OutcomeRequeued), int64(OutcomeRetrying), int64(OutcomeParked)},
	reapLostScript: {sweepNotOrphan, sweepSuspect, sweepAwaitsMerge,
		int64(OutcomeRequeued), int64(OutcomeRetrying), int64(OutcomeParked)},
	failAttemptScript: {int64(OutcomeStale),
		int64(OutcomeRequeued), int64(OutcomeRetrying), int64(OutcomeParked)},
	ackDoneScript:        {ackNotPending, ackRemoved, ackReleased},
	quarantineScript:     {quarantineNotPending, quarantineMoved},
	retryFailedScript:    {retryFailedChanged, retryFailedQueued, retryFailedDispatched},
	acquireLockScript:    {lockRefused, lockDone},
	takeOverLockScript:   {lockRefused, lockDone},
	releaseLockScript:    {lockRefused, lockDone},
	trimQuarantineScript: {0}, // a count: 0 when nothing is over the limit
}
