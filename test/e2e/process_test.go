package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stopGrace bounds how long a SIGTERM'd process may take to exit before it is killed.
const stopGrace = 20 * time.Second

// proc is one real process a test owns: started, stopped, killed, restarted and reconfigured
// by the test. Every incarnation's stdout and stderr go to one log file, which is printed when
// the test fails; a data race reported by a child (race-built binaries) fails the test.
type proc struct {
	t    *testing.T
	name string
	bin  string
	args []string
	// Env is the process environment (nothing is inherited but PATH and HOME). Change it
	// between stop and start to reconfigure the process.
	Env     map[string]string
	logPath string

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	exitCode int
	starts   int
}

// newProc registers a process (not started) whose log lives in dir.
func newProc(t *testing.T, dir, name, bin string, args []string, env map[string]string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, bin: bin, args: args, Env: env, logPath: filepath.Join(dir, name+".log")}
	t.Cleanup(func() {
		p.Kill()
		if races := p.logCount("WARNING: DATA RACE"); races > 0 {
			t.Errorf("%s: the race detector reported %d data race(s)", p.name, races)
		}
		if t.Failed() {
			p.dumpLog()
		}
	})
	return p
}

// Start starts a new incarnation. The process is killed if the test binary dies.
func (p *proc) Start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		select {
		case <-p.exited:
		default:
			p.t.Fatalf("%s: start while running", p.name)
		}
	}
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	defer logf.Close() // the child has its own descriptor
	p.starts++
	fmt.Fprintf(logf, "=== %s start #%d at %s: %s %s\n", p.name, p.starts, time.Now().Format(time.RFC3339Nano), p.bin, strings.Join(p.args, " "))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = p.environ()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("%s: start: %v", p.name, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited = cmd, exited
	go func() {
		_ = cmd.Wait()
		p.mu.Lock()
		p.exitCode = cmd.ProcessState.ExitCode()
		p.mu.Unlock()
		close(exited)
	}()
}

func (p *proc) environ() []string {
	// A race-built binary waits 1 s at exit by default; its reports do not need it.
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GORACE=atexit_sleep_ms=0"}
	keys := make([]string, 0, len(p.Env))
	for k := range p.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+p.Env[k])
	}
	return env
}

// Stop sends SIGTERM and waits for a clean exit (code 0); a process that does not exit within
// stopGrace is killed and fails the test, as does a non-zero exit code.
func (p *proc) Stop() {
	p.t.Helper()
	cmd, exited := p.current()
	if cmd == nil {
		return
	}
	select {
	case <-exited:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(stopGrace):
		_ = cmd.Process.Kill()
		<-exited
		p.t.Fatalf("%s: did not stop within %v of SIGTERM", p.name, stopGrace)
	}
	if code := p.ExitCode(); code != 0 {
		p.t.Fatalf("%s: exit code %d after SIGTERM, want 0", p.name, code)
	}
}

// Kill sends SIGKILL and waits for the process to exit.
func (p *proc) Kill() {
	cmd, exited := p.current()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// Restart stops the process cleanly and starts it again with the current Env.
func (p *proc) Restart() {
	p.t.Helper()
	p.Stop()
	p.Start()
}

// Running reports whether the current incarnation has not exited.
func (p *proc) Running() bool {
	_, exited := p.current()
	if exited == nil {
		return false
	}
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

// WaitExit waits up to d for the current incarnation to exit and returns its exit code.
func (p *proc) WaitExit(d time.Duration) int {
	p.t.Helper()
	_, exited := p.current()
	if exited == nil {
		p.t.Fatalf("%s: never started", p.name)
	}
	select {
	case <-exited:
		return p.ExitCode()
	case <-time.After(d):
		p.t.Fatalf("%s: still running after %v", p.name, d)
		return -1
	}
}

// ExitCode is the last incarnation's exit code (-1 for a signal).
func (p *proc) ExitCode() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitCode
}

func (p *proc) current() (*exec.Cmd, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd, p.exited
}

// Log returns every incarnation's output so far.
func (p *proc) Log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// LogSinceStart returns the current incarnation's output.
func (p *proc) LogSinceStart() string {
	s := p.Log()
	if i := strings.LastIndex(s, "=== "+p.name+" start #"); i >= 0 {
		return s[i:]
	}
	return s
}

// logCount counts the lines of the whole log containing substr.
func (p *proc) logCount(substr string) int {
	return strings.Count(p.Log(), substr)
}

// dumpLog prints the log's last lines into the test output.
func (p *proc) dumpLog() {
	const maxLines = 300
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		p.t.Logf("%s: no log: %v", p.name, err)
		return
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	skipped := ""
	if len(lines) > maxLines {
		skipped = fmt.Sprintf("(%d earlier lines in %s)\n", len(lines)-maxLines, p.logPath)
		lines = lines[len(lines)-maxLines:]
	}
	p.t.Logf("---- log of %s ----\n%s%s\n---- end of %s ----", p.name, skipped, strings.Join(lines, "\n"), p.name)
}
