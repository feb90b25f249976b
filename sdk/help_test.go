package sdk

import (
	"regexp"
	"strings"
	"testing"
)

func TestHelpAsked(t *testing.T) {
	for args, want := range map[string]bool{"-h": true, "-help": true, "--help": true, "": false, "inspect --help": false, "help": false} {
		if got := HelpAsked(strings.Fields(args)); got != want {
			t.Errorf("HelpAsked(%q) = %v, want %v", args, got, want)
		}
	}
}

// The usage names every variable LoadConfig reads, and the module's own after them.
func TestPrintHelpNamesEveryVariable(t *testing.T) {
	var b strings.Builder
	if err := PrintHelp(&b, "x-module", "About x.", EnvVar{"X_LIMIT", "how much x"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"usage: x-module", "About x.", EnvModuleName, EnvQueueName, EnvModuleUID, EnvModules,
		EnvRedisHost, EnvRedisTLSCAFile, EnvTimeout, EnvWorkerID, EnvResourceShares, EnvMetadataDir, EnvFilesDir,
		EnvUIDRetrySeconds, EnvLoggingLevel, EnvLogFormat, "X_LIMIT "} {
		if !strings.Contains(out, want) {
			t.Errorf("usage lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`\n  X_LIMIT +how much x\n`).MatchString(out) {
		t.Errorf("the module's variable is not a row of its own:\n%s", out)
	}
	if strings.Index(out, EnvLogFormat) > strings.Index(out, "X_LIMIT") {
		t.Errorf("the module's own variables should follow the SDK's:\n%s", out)
	}
}
