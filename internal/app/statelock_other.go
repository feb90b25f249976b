//go:build !unix

package app

// lockStateDir cannot tell a dead predecessor without flock: a restart waits out the TTL.
func lockStateDir(string) (release func()) { return nil }

const canLockStateDir = false
