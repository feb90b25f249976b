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
