//go:build unix

package app

import (
	"os"
	"syscall"
)

// lockStateDir takes an exclusive flock on path (the kernel drops it when the process dies,
// however it dies) and returns its release; nil when another process holds it.
func lockStateDir(path string) (release func()) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil
	}
	return func() { f.Close() }
}

// canLockStateDir: flock tells a live daemon from a dead one here.
const canLockStateDir = true
