// Package durable holds what makes a file system change survive a crash, shared by the packages
// that write files atomically (metadata, drives, state).
package durable

import (
	"errors"
	"os"
	"syscall"
)

// SyncDir fsyncs a directory so that a rename or a new entry in it survives a crash. File
// systems that cannot sync a directory (EINVAL, ENOTSUP) are accepted as they are.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return err
}
