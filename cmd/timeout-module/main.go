// Command timeout-module is the end-to-end suite's slow module: Check sleeps CHECK_SLEEP
// seconds and Run sleeps SLEEP seconds (both give up when their deadline ends the context),
// then Run writes version.json and returns the document unchanged. Check skips files whose
// version.json says 1. With RECORD_FILE set, every check and run is recorded there (package
// jobrecord).
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/homeindex/homeindex/cmd/internal/jobrecord"
	"github.com/homeindex/homeindex/sdk"
)

func main() {
	m, err := fromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "timeout-module:", err)
		os.Exit(sdk.ExitConfig)
	}
	sdk.Main(jobrecord.Wrap(m, os.Getenv))
}

// fromEnv reads SLEEP and CHECK_SLEEP (seconds, decimals allowed; unset means 0).
func fromEnv(getenv func(string) string) (module, error) {
	var m module
	for _, v := range []struct {
		name string
		dst  *time.Duration
	}{{"SLEEP", &m.runSleep}, {"CHECK_SLEEP", &m.checkSleep}} {
		s := getenv(v.name)
		if s == "" {
			continue
		}
		var f float64
		if _, err := fmt.Sscanf(s, "%g", &f); err != nil || f < 0 {
			return m, fmt.Errorf("%s=%q: want a number of seconds >= 0", v.name, s)
		}
		*v.dst = time.Duration(f * float64(time.Second))
	}
	return m, nil
}
