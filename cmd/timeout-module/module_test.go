package main

import (
	"testing"
	"time"

	"github.com/homeindex/homeindex/sdk"
	"github.com/homeindex/homeindex/sdk/moduletest"
)

func TestFromEnv(t *testing.T) {
	t.Parallel()
	m, err := fromEnv(func(k string) string { return map[string]string{"SLEEP": "2", "CHECK_SLEEP": "0.5"}[k] })
	if err != nil || m.runSleep != 2*time.Second || m.checkSleep != 500*time.Millisecond {
		t.Errorf("fromEnv = %+v, %v", m, err)
	}
	if _, err := fromEnv(func(k string) string { return map[string]string{"SLEEP": "-1"}[k] }); err == nil {
		t.Error("SLEEP=-1 accepted")
	}
}

// TestTimeouts (scenarios 8 and 9): a sleep longer than TIMEOUT in run or check times out;
// without sleeps the run writes version.json.
func TestTimeouts(t *testing.T) {
	t.Parallel()
	short := moduletest.Configure(func(c *sdk.Config) { c.Timeout = 300 * time.Millisecond })
	for _, tc := range []struct {
		name    string
		m       module
		timeout bool
	}{
		{"run sleeps", module{runSleep: 5 * time.Second}, true},
		{"check sleeps", module{checkSleep: 5 * time.Second}, true},
		{"no sleep", module{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := moduletest.Run(t, tc.m, moduletest.File("a.txt", "a"), short)[0]
			if o.TimedOut != tc.timeout || o.Ran == tc.timeout {
				t.Errorf("outcome %+v, want timed out %v", o, tc.timeout)
			}
			if _, ok := o.Files["version.json"]; ok == tc.timeout {
				t.Errorf("version.json written: %v, want %v", ok, !tc.timeout)
			}
		})
	}
}
