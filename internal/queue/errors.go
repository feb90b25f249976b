package queue

import (
	"errors"
	"fmt"
)

var (
	// ErrRedisTooOld is returned by Connect for a server older than MinRedisVersion.
	ErrRedisTooOld = errors.New("redis server too old")
	// ErrNoDone is returned by NextDone when no result arrived before the timeout.
	ErrNoDone = errors.New("no result waiting")
	// ErrNotPending is returned by AckDone and Quarantine for a payload that is not in
	// modules:done:processing (already acknowledged, or never taken).
	ErrNotPending = errors.New("result not pending")
	// ErrLockLost is returned by RenewLock when another owner holds the daemon lock.
	ErrLockLost = errors.New("daemon lock lost")
)

// unexpected reports a script reply the Go side does not know: a bug, never user input.
func unexpected(op string, reply any) error {
	return fmt.Errorf("%s: unexpected script reply %v (%T)", op, reply, reply)
}
