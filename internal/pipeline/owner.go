package pipeline

import (
	"os"
	"path/filepath"
	"strings"
)

// LockOwnerFile, in STATE_DIRECTORY, holds the Redis lock token this directory's daemon last
// held, so that a restart after a crash can take its own dead predecessor's lock over at once
// (Config.Predecessor, queue.TakeOverLock) instead of waiting out the lock's TTL.
const LockOwnerFile = "redis-lock-owner"

// LastOwner returns the Redis lock token recorded in stateDir, or "" when none is.
func LastOwner(stateDir string) string {
	b, err := os.ReadFile(filepath.Join(stateDir, LockOwnerFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// recordOwner writes the token this daemon holds, or is about to take, the Redis lock with
// (best effort: without it a restart merely waits for the TTL).
func recordOwner(stateDir, owner string) error {
	path := filepath.Join(stateDir, LockOwnerFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(owner+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
