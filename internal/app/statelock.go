package app

import (
	"os"
	"path/filepath"
	"strings"
)

// State-directory files of the Redis lock's bookkeeping.
const (
	processLockFile = "daemon.lock"      // flock-ed by the live homeindexd using this directory
	lockOwnerFile   = "redis-lock-owner" // the Redis lock token this directory's daemon last held
)

// predecessor returns the Redis lock token of this state directory's previous homeindexd when
// that process is certainly dead: this process holds the directory's flock (so no other live
// process uses it) and the token is on record. A restart after kill -9 then takes the lock
// over at once (queue.TakeOverLock) instead of waiting out its TTL. Two daemons sharing one
// state directory (a test setup) get "": the second waits as a standby. release gives the
// flock back.
func predecessor(stateDir string) (token string, release func()) {
	unlock := lockStateDir(filepath.Join(stateDir, processLockFile))
	if unlock == nil {
		return "", func() {}
	}
	b, err := os.ReadFile(filepath.Join(stateDir, lockOwnerFile))
	if err != nil {
		return "", unlock
	}
	return strings.TrimSpace(string(b)), unlock
}

// recordOwner writes the token this daemon holds the Redis lock with (best effort: without it
// a restart merely waits for the TTL).
func recordOwner(stateDir, owner string) error {
	path := filepath.Join(stateDir, lockOwnerFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(owner+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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

// predecessorOf is predecessor for this App: when it holds the state lock already (a second
// flock from the same process would fail), the recorded token is read as is.
func (a *App) predecessorOf(stateDir string) (token string, release func()) {
	if a.stateLock == nil {
		return predecessor(stateDir)
	}
	b, err := os.ReadFile(filepath.Join(stateDir, lockOwnerFile))
	if err != nil {
		return "", func() {}
	}
	return strings.TrimSpace(string(b)), func() {}
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
