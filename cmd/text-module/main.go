// Command text-module is the text module (package modules/text) as a process: it serves the
// queues named by MODULE_NAME (normally "text") over Redis with the SDK. Configuration comes
// from the environment (see package sdk); GOMEMLIMIT, when unset, is 192 MiB, so the garbage
// collector works harder before the process nears the module's 256 MB budget.
package main

import (
	"os"
	"runtime/debug"

	"github.com/homeindex/homeindex/modules/text"
	"github.com/homeindex/homeindex/sdk"
)

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(192 << 20)
	}
	sdk.Main(text.New())
}
