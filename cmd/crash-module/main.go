// Command crash-module is the end-to-end suite's crashing module: with CRASH=1 its Run logs
// "crashing" and the process dies mid-run (exit status 1), holding its item and any share
// tokens; with CRASH_ON=<text> it does so only for files whose path contains text (a poison
// file); otherwise Run writes version.json and returns the document unchanged. Check always
// runs. With RECORD_FILE set, every check and every run that returns is recorded there
// (package jobrecord).
package main

import (
	"os"

	"github.com/homeindex/homeindex/cmd/internal/jobrecord"
	"github.com/homeindex/homeindex/sdk"
)

func main() {
	sdk.Main(jobrecord.Wrap(module{crash: os.Getenv("CRASH") == "1", crashOn: os.Getenv("CRASH_ON"), exit: os.Exit}, os.Getenv))
}
