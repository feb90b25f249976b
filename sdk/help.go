package sdk

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// EnvVar names an environment variable a module's process reads, for its --help.
type EnvVar struct {
	Name, Meaning string
}

// Environment is what every module's process reads from its environment (LoadConfig).
func Environment() []EnvVar {
	return []EnvVar{
		{EnvModuleName, "the module's name: its queue keys and its metadata subdirectory (required; alias " + EnvQueueName + ")"},
		{EnvModuleUID, "this build's uid; items carrying another uid are set aside"},
		{EnvModules, "the daemon's module list; when set, it must name this module with MODULE_UID"},
		{EnvRedisHost, "Redis as host:port, redis:// or rediss:// (default " + DefaultRedisHost + ")"},
		{EnvRedisTLSCAFile, "PEM bundle that verifies a rediss:// server (default: the system's roots)"},
		{EnvTimeout, fmt.Sprintf("seconds a check or a run may take (default %.0f)", DefaultTimeout.Seconds())},
		{EnvWorkerID, "this worker's name in resource-share rotations (default: random)"},
		{EnvResourceShares, "resource-share groups a run must hold a token of every one of"},
		{EnvMetadataDir, "the metadata directory (default " + DefaultMetadataDir + ")"},
		{EnvFilesDir, "the root documents' paths are relative to (default " + DefaultFilesDir + ")"},
		{EnvUIDRetrySeconds, fmt.Sprintf("seconds an item with another uid waits before it is offered again (default %.0f)", DefaultUIDRetry.Seconds())},
		{EnvLoggingLevel, "debug, info, warn or error (default " + defaultLoggingLevel + ")"},
		{EnvLogFormat, "json (default) or console"},
	}
}

// HelpAsked reports whether a module's arguments ask for its usage (-h, -help or --help). Main
// answers them itself; a module whose main does work before calling Main (probing the tools it
// runs, say) asks first and calls PrintHelp, so that --help works where those tools are missing.
func HelpAsked(args []string) bool {
	return len(args) > 0 && slices.Contains([]string{"-h", "-help", "--help"}, args[0])
}

// PrintHelp writes a module's usage to w: about (a paragraph, or ""), then the variables it
// reads, the SDK's (Environment) and its own.
func PrintHelp(w io.Writer, program, about string, own ...EnvVar) error {
	if _, err := fmt.Fprintf(w, "usage: %s\n\n", program); err != nil {
		return err
	}
	if about != "" {
		if _, err := fmt.Fprintf(w, "%s\n\n", about); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(w, "A Home-Index module: it serves its queues over Redis until SIGTERM or SIGINT.\n"+
		"Its configuration comes from the environment:\n\n"); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, v := range append(Environment(), own...) {
		fmt.Fprintf(tw, "  %s\t%s\n", v.Name, v.Meaning)
	}
	return tw.Flush()
}
