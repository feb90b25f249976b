// Command homeindexd is the Home-Index core daemon: it scans files and archive drives, keeps
// one metadata document per unique content, and keeps a search index current. See README.md.
//
// This package only wires: configuration, logger, components, exit codes. The logic lives in
// internal/.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"syscall"

	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/internal/gcfloor"
)

// Exit codes.
const (
	exitOK     = 0
	exitFail   = 1
	exitConfig = 2 // bad configuration or usage
)

func main() {
	startGCFloor(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// startGCFloor paces the garbage collector for the daemon's small live heap (internal/gcfloor)
// unless the environment sets GOGC, which is then taken as it is. It returns the floor, nil
// when none was started.
func startGCFloor(getenv func(string) string) *gcfloor.Floor {
	if getenv("GOGC") != "" {
		return nil
	}
	return gcfloor.Start(gcfloor.DaemonHeadroom)
}

// env is what every subcommand gets.
type env struct {
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
}

type command struct {
	name, summary string
	run           func(ctx context.Context, e env, args []string) error
}

var commands []command

func init() {
	commands = []command{
		{"run", "start-up sync, then a sync on every cron tick (default)", cmdRun},
		{"sync", "run one sync, print its counts and exit", cmdSync},
		{"search", "search the index: search [WORDS] [--filter F] [--sort S] [--limit N] [--facets] [--json]", cmdSearch},
		{"healthcheck", "probe the running daemon's /readyz (exit 0 or 1)", cmdHealthcheck},
		{"status", "where every module, drive and sync stands (running daemon): status [--json]", cmdStatus},
		{"failed", "list parked jobs and quarantined results: failed [--module M]; failed clear [--module M]", cmdFailed},
		{"retry", "run parked jobs again: retry [--module M] [--file ID|PATH] [--all]", cmdRetry},
		{"pause", "stop new dispatches to a module: pause MODULE", cmdPause},
		{"resume", "let a paused module run again: resume MODULE", cmdResume},
		{"requeue", "send documents back to a module: requeue --module M [--path PREFIX]", cmdRequeue},
		{"version", "print the version", cmdVersion},
	}
}

// usageError is a command-line mistake: exit 2.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	e := env{getenv: getenv, stdout: stdout, stderr: stderr}
	name := "run"
	if len(args) > 0 {
		switch args[0] {
		case "-h", "--help", "help":
			usage(stdout)
			return exitOK
		}
		name, args = args[0], args[1:]
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		stopProfile, err := startProfiles(getenv("HOMEINDEXD_CPUPROFILE"), getenv("HOMEINDEXD_MEMPROFILE"), getenv("HOMEINDEXD_TRACE"), stderr)
		if err != nil {
			return exitCode(err, stderr)
		}
		err = c.run(ctx, e, args)
		stopProfile()
		return exitCode(err, stderr)
	}
	fmt.Fprintf(stderr, "homeindexd: unknown command %q\n\n", name)
	usage(stderr)
	return exitConfig
}

// startProfiles writes a CPU profile of the command to cpuPath (HOMEINDEXD_CPUPROFILE), its
// allocations to memPath (HOMEINDEXD_MEMPROFILE, written when the command ends) and an
// execution trace to tracePath (HOMEINDEXD_TRACE: which goroutine ran when, to find the stage
// that holds up the others), for performance work; scripts/bench-sync.sh passes them through.
// Empty paths write nothing; a memory profile that cannot be written is reported on stderr.
func startProfiles(cpuPath, memPath, tracePath string, stderr io.Writer) (stop func(), err error) {
	stopTrace, err := startRecording("HOMEINDEXD_TRACE", tracePath, trace.Start, trace.Stop)
	if err != nil {
		return nil, err
	}
	stopCPU, err := startRecording("HOMEINDEXD_CPUPROFILE", cpuPath, pprof.StartCPUProfile, pprof.StopCPUProfile)
	if err != nil {
		stopTrace()
		return nil, err
	}
	return func() {
		stopCPU()
		stopTrace()
		if memPath == "" {
			return
		}
		f, err := os.Create(memPath)
		if err == nil {
			err = errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
		}
		if err != nil {
			fmt.Fprintf(stderr, "homeindexd: HOMEINDEXD_MEMPROFILE: %v\n", err)
		}
	}, nil
}

// startRecording starts a recording to the file at path (nothing when path is empty) with
// start, and returns what stops it with stop and closes the file; errors name the variable.
func startRecording(variable, path string, start func(io.Writer) error, stop func()) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", variable, err)
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", variable, err)
	}
	return func() { stop(); f.Close() }, nil
}

// exitCode maps an error to its message and exit code; the only place that does.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, errHelp) {
		return exitOK
	}
	var ce *config.Error
	var ue usageError
	switch {
	case errors.As(err, &ce):
		fmt.Fprintln(stderr, "homeindexd: invalid configuration:")
		for _, p := range ce.Problems {
			fmt.Fprintln(stderr, "  - "+p)
		}
		return exitConfig
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "homeindexd: "+ue.msg)
		return exitConfig
	}
	fmt.Fprintln(stderr, "homeindexd: "+err.Error())
	return exitFail
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: homeindexd [command] [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nConfiguration comes from the environment; see README.md. `homeindexd COMMAND --help` for flags.")
}
