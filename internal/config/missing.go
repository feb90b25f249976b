package config

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Missing files: retention and the mass-removal hold.
const (
	envMissingRetention = "MISSING_RETENTION"
	envMissingHoldShare = "MISSING_HOLD_SHARE"
	envMissingHoldMin   = "MISSING_HOLD_MIN"

	DefaultMissingRetention = 30 * 24 * time.Hour
	DefaultMissingHoldShare = 0.20
	DefaultMissingHoldMin   = 100
)

// Missing says how long a missing document is kept and when a sync holds its removals.
type Missing struct {
	// Retention is MISSING_RETENTION: how long a document whose files all disappeared keeps
	// its by-id directory (module outputs) before the purge removes it; default 30d.
	Retention time.Duration
	// HoldShare is MISSING_HOLD_SHARE, a fraction of the live documents (0.2 or 20%); a sync
	// that would make more than this share missing at once, and at least HoldMin, holds those
	// removals until the operator confirms. Default 20%.
	HoldShare float64
	// HoldMin is MISSING_HOLD_MIN; default 100. 0 with HoldShare 0 turns the hold off.
	HoldMin int
}

func (e *env) missing(c *Config) {
	m := &c.Missing
	m.Retention = DefaultMissingRetention
	if v := e.value(envMissingRetention); v != "" {
		d, err := parseDays(v)
		switch {
		case err != nil:
			e.problemf(envMissingRetention, v, "%v", err)
		case d <= 0:
			e.problemf(envMissingRetention, v, "must be greater than zero")
		default:
			m.Retention = d
		}
	}
	m.HoldShare = DefaultMissingHoldShare
	if v := e.value(envMissingHoldShare); v != "" {
		s, err := parseShare(v)
		if err != nil {
			e.problemf(envMissingHoldShare, v, "%v", err)
		} else {
			m.HoldShare = s
		}
	}
	m.HoldMin = e.intAtLeast(envMissingHoldMin, DefaultMissingHoldMin, 0)
}

// parseDays accepts a duration with a day unit ("30d", "1d12h") besides parseDuration's forms.
func parseDays(v string) (time.Duration, error) {
	days, rest, ok := strings.Cut(v, "d")
	if !ok {
		d, err := parseDuration(v)
		if err != nil {
			return 0, errDays
		}
		return d, nil
	}
	n, err := strconv.ParseFloat(days, 64)
	if err != nil || n < 0 || n > 100*365 {
		return 0, errDays
	}
	d := time.Duration(n * float64(24*time.Hour))
	if rest != "" {
		r, err := time.ParseDuration(rest)
		if err != nil {
			return 0, errDays
		}
		d += r
	}
	return d, nil
}

type configErr string

func (e configErr) Error() string { return string(e) }

const (
	errDays  = configErr("must be a duration such as 30d, 12h or 90m")
	errShare = configErr("must be a fraction between 0 and 1 (0.2) or a percentage (20%)")
)

// parseShare accepts 0.2 or 20%.
func parseShare(v string) (float64, error) {
	pct := strings.HasSuffix(v, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil || math.IsNaN(f) {
		return 0, errShare
	}
	if pct {
		f /= 100
	}
	if f < 0 || f > 1 {
		return 0, errShare
	}
	return f, nil
}
