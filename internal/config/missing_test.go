package config

import (
	"strings"
	"testing"
	"time"
)

func TestMissingSettings(t *testing.T) {
	for _, tt := range []struct {
		retention, share, min string
		want                  Missing
	}{
		{"30d", "0.2", "100", Missing{30 * 24 * time.Hour, 0.2, 100}},
		{"1d12h", "5%", "0", Missing{36 * time.Hour, 0.05, 0}},
		{"90m", "1", "7", Missing{90 * time.Minute, 1, 7}},
		{"3", "0", "1", Missing{3 * time.Second, 0, 1}},
	} {
		c, err := Load(func(k string) string {
			return map[string]string{envMissingRetention: tt.retention, envMissingHoldShare: tt.share, envMissingHoldMin: tt.min}[k]
		})
		if err != nil {
			t.Fatalf("%+v: %v", tt, err)
		}
		if c.Missing != tt.want {
			t.Errorf("%+v: got %+v", tt, c.Missing)
		}
	}
}

func TestMissingSettingsRefused(t *testing.T) {
	for _, tt := range []struct{ name, value, want string }{
		{envMissingRetention, "forever", "30d"},
		{envMissingRetention, "0d", "greater than zero"},
		{envMissingRetention, "-5", "greater than zero"},
		{envMissingHoldShare, "150%", "between 0 and 1"},
		{envMissingHoldShare, "half", "between 0 and 1"},
		{envMissingHoldMin, "-1", "at least 0"},
	} {
		problems := problemsOf(t, map[string]string{tt.name: tt.value})
		if len(problems) != 1 || !strings.Contains(problems[0], tt.want) || !strings.Contains(problems[0], tt.name) {
			t.Errorf("%s=%q: problems %q, want one naming it and saying %q", tt.name, tt.value, problems, tt.want)
		}
	}
}
