package app

import (
	"os"
	"path/filepath"

	"github.com/homeindex/homeindex/internal/pipeline"
)

// outboxLockFile, in STATE_DIRECTORY, is flock-ed by a process while it drains the outbox
// (outbox.Config.LockFile).
const outboxLockFile = "outbox.lock"

// processLockFile, in STATE_DIRECTORY, is flock-ed by the live homeindexd using the directory.
const processLockFile = "daemon.lock"

// predecessor returns the Redis lock token of this state directory's previous homeindexd when
// that process is certainly dead: this process holds the directory's flock (so no other live
// process uses it) and the token is on record. A restart after kill -9 then takes the lock
// over at once (queue.TakeOverLock) instead of waiting out its TTL. Two daemons sharing one
// state directory (a test setup) get "": the second waits as a standby. owns says whether
// this process holds the flock; release gives it back.
func predecessor(stateDir string) (token string, owns bool, release func()) {
	unlock := lockStateDir(filepath.Join(stateDir, processLockFile))
	if unlock == nil {
		return "", false, func() {}
	}
	return pipeline.LastOwner(stateDir), true, unlock
}

// HoldStateLock takes STATE_DIRECTORY's lock for the life of the App (Close gives it back)
// and says whether this process holds it now; false when another process does. `run` holds
// it so that `homeindexd sync` beside it asks it to sync rather than writing the catalog too.
func (a *App) HoldStateLock() bool {
	if a.stateLock != nil {
		return true
	}
	a.stateLock = lockStateDir(filepath.Join(a.Config.StateDirectory, processLockFile))
	return a.stateLock != nil
}

// predecessor is the package function for this App (pipeline.Config.Predecessor): when it
// holds the state lock already (a second flock from the same process would fail), the
// recorded token is read as is.
func (a *App) predecessor() (token string, owns bool, release func()) {
	if a.stateLock == nil {
		return predecessor(a.Config.StateDirectory)
	}
	return pipeline.LastOwner(a.Config.StateDirectory), true, func() {}
}

// StateDirBusy says whether another process holds stateDir's lock (a running homeindexd). It
// creates nothing: a state directory that does not exist yet is not busy.
func StateDirBusy(stateDir string) bool {
	path := filepath.Join(stateDir, processLockFile)
	if _, err := os.Stat(path); err != nil || !canLockStateDir {
		return false
	}
	release := lockStateDir(path)
	if release == nil {
		return true
	}
	release()
	return false
}
