// Package durable holds what makes a file system change survive a crash, shared by the packages
// that write files atomically (metadata, drives, state).
package durable

import (
	"errors"
	"os"
	"strings"
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
// dst's directory (SyncDir) when the rename itself must survive a crash. A pattern built from a
// long name is shortened (TempPattern), so a 255-byte dst still gets a temp name that fits.
func ReplaceFile(tmpDir, pattern, dst string, data []byte, perm os.FileMode, sync bool) error {
	f, err := os.CreateTemp(tmpDir, TempPattern(pattern))
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

// NameMax is the longest file name (one path element, in bytes) Linux file systems take.
const NameMax = 255

// createTempDigits is the most os.CreateTemp puts in place of the pattern's "*" (a uint32).
const createTempDigits = 10

// TempPattern returns an os.CreateTemp pattern whose names fit NameMax: when pattern (prefix,
// "*", suffix) could give a longer name, the prefix is cut, keeping the suffix, which callers
// use to recognise their temp files (a suffix too long on its own keeps its end).
func TempPattern(pattern string) string {
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	if len(prefix)+len(suffix)+createTempDigits <= NameMax {
		return pattern
	}
	if room := NameMax - createTempDigits; len(suffix) > room {
		return "*" + suffix[len(suffix)-room:]
	}
	return prefix[:NameMax-createTempDigits-len(suffix)] + "*" + suffix
}
