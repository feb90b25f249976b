// Package proccpu reads this process's CPU time, for benchmarks that report CPU per operation
// beside wall time (on a shared 2-core machine wall time alone hides what the work costs).
package proccpu

import (
	"syscall"
	"time"
)

// Used is the user and system CPU time this process has used so far (getrusage RUSAGE_SELF,
// which cannot fail for this process).
func Used() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
