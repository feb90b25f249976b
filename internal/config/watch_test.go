package config

import (
	"strings"
	"testing"
	"time"
)

func TestWatchDefaultsAndValues(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, map[string]string{})
	if c.Watch != (Watch{Percent: 50, Rewalk: 30 * time.Second, Settle: 5 * time.Second}) {
		t.Fatalf("defaults %+v", c.Watch)
	}
	c = mustLoad(t, map[string]string{"WATCH_LIMIT": "1000", "REWALK_INTERVAL": "2m", "SETTLE_TIME": "0"})
	if c.Watch != (Watch{Limit: 1000, Rewalk: 2 * time.Minute}) {
		t.Fatalf("values %+v", c.Watch)
	}
	c = mustLoad(t, map[string]string{"WATCH_LIMIT": "25%", "SETTLE_TIME": "1.5"})
	if c.Watch.Percent != 25 || c.Watch.Settle != 1500*time.Millisecond {
		t.Fatalf("share and seconds %+v", c.Watch)
	}
}

// Every bad change-detection value is reported at once.
func TestWatchBadValuesListed(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"WATCH_LIMIT":     {"-1", "lots", "95%", "0%"},
		"REWALK_INTERVAL": {"0", "500ms", "soon"},
		"SETTLE_TIME":     {"-1s", "31s", "later"},
	}
	for name, values := range cases {
		for _, v := range values {
			problems := problemsOf(t, map[string]string{name: v, "CRON_EXPRESSION": "nope"})
			if len(problems) != 2 || !strings.HasPrefix(problems[1], name+` "`+v+`"`) {
				t.Errorf("%s=%s: problems %q, want the cron one and one naming %s", name, v, problems, name)
			}
		}
	}
}
