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

// ReplaceFile writes data to a new temp file in tmpDir (named by os.CreateTemp's pattern),
// sets perm, fsyncs it when sync is set, and renames it over dst, so a reader sees the old
// content or the new, never a part. The temp file is removed on any failure. The caller syncs
// dst's directory (SyncDir) when the rename itself must survive a crash.
func ReplaceFile(tmpDir, pattern, dst string, data []byte, perm os.FileMode, sync bool) error {
	f, err := os.CreateTemp(tmpDir, pattern)
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err = f.Write(data); err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
