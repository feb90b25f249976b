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
