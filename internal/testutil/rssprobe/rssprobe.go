// Package rssprobe measures the peak resident memory of some work in a process of its own: the
// test binary runs itself again as a child that does only that work, so neither the test's
// other allocations nor the race detector's shadow memory count.
package rssprobe

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Serve, called first in TestMain, makes the process a probe child when the variable env is
// set: it runs work over the files env lists (one per line), prints its peak RSS in kB and
// exits (1 when work fails). Without env it returns at once.
func Serve(env string, work func(files []string) error) {
	files := os.Getenv(env)
	if files == "" {
		return
	}
	if err := work(strings.Split(files, "\n")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kb, err := VmHWM()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(kb)
	os.Exit(0)
}

// PeakKB runs the test binary as a probe child over files (see Serve) and returns its peak
// RSS in kB.
func PeakKB(tb testing.TB, env string, files []string) int64 {
	tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), env+"="+strings.Join(files, "\n"))
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			tb.Fatalf("rss probe: %v\n%s", err, ee.Stderr)
		}
		tb.Fatalf("rss probe: %v", err)
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		tb.Fatalf("rss probe printed %q: %v", out, err)
	}
	return kb
}

// VmHWM returns this process's peak resident set size in kB (/proc/self/status).
func VmHWM() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			if fields := strings.Fields(v); len(fields) > 0 {
				return strconv.ParseInt(fields[0], 10, 64)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no VmHWM line in /proc/self/status")
}

// ServeCommand, called first in TestMain, makes the process a probe parent when the variable
// env is set: it runs the command in its arguments, passes the command's stdout through and
// prints the command's peak RSS (ru_maxrss, kB) on stderr. Why a probe parent: os/exec starts
// children with vfork (CLONE_VM), so at exec the kernel seeds a child's ru_maxrss with its
// parent's peak; measured from a test process (hundreds of MB under -race with parallel
// tests) the figure would be the test's, not the command's. A freshly started probe is small.
func ServeCommand(env string) {
	if os.Getenv(env) == "" {
		return
	}
	os.Unsetenv(env) // the command is not a probe itself
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdout = os.Stdout
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "no rusage")
		os.Exit(2)
	}
	fmt.Fprintln(os.Stderr, ru.Maxrss)
	os.Exit(0)
}

// CommandPeakKB runs argv under a probe parent (see ServeCommand) and returns its stdout and
// its peak RSS in kB. The command's own exit status is not an error: callers check its output.
func CommandPeakKB(tb testing.TB, env string, argv ...string) ([]byte, int64) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], argv...)
	cmd.Env = append(os.Environ(), env+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("rss probe: %v\n%s", err, stderr.String())
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(stderr.String()), 10, 64)
	if err != nil {
		tb.Fatalf("rss probe printed %q: %v", stderr.String(), err)
	}
	return out, kb
}
