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

// Environment is what every module's process reads from its environment (LoadConfig), with
// the defaults; invalid values are all listed and exit 2 (Main).
func Environment() []EnvVar {
	return []EnvVar{
		{EnvModuleName, "required; the name in MODULES and the queue key prefix (alias " + EnvQueueName + ")"},
		{EnvModuleUID, "this build's uid; items carrying another uid are set aside"},
		{EnvModules, "the daemon's YAML list; if set, it must give this module MODULE_UID (else \"fatal mis-configuration\", exit 1)"},
		{EnvRedisHost, DefaultRedisHost + " (default), host:port, redis://[user:pass@]host:port[/db], rediss://... (" + EnvRedisTLSCAFile + "), http://host:port"},
		{EnvRedisTLSCAFile, "PEM bundle that verifies a rediss:// server (default: the system's roots)"},
		{EnvTimeout, fmt.Sprintf("seconds per check and per run (default %.0f; decimals allowed)", DefaultTimeout.Seconds())},
		{EnvWorkerID, "identity in share rotations (default: a random UUID)"},
		{EnvResourceShares, "YAML list of {name, seconds}: a run starts only while this worker holds each group's token"},
		{EnvMetadataDir, "the metadata directory (default " + DefaultMetadataDir + ")"},
		{EnvFilesDir, "the root documents' paths are relative to (default " + DefaultFilesDir + ")"},
		{EnvUIDRetrySeconds, fmt.Sprintf("how long an item with another uid is set aside (default %.0f)", DefaultUIDRetry.Seconds())},
		{EnvLoggingLevel, "debug, info, warn or error, Python names such as WARNING too (default " + defaultLoggingLevel + ")"},
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
