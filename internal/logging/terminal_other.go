//go:build !linux

package logging

import "os"

// IsTerminal reports whether f is a character device, which outside Linux is close enough to
// "a terminal" for picking LOG_FORMAT.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
