package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// env reads variables through getenv and collects every problem instead of stopping at the
// first, so the user fixes the whole configuration in one go.
type env struct {
	getenv   func(string) string
	problems []string
}

// problemf records a problem naming the variable and its bad value.
func (e *env) problemf(name, value, format string, args ...any) {
	e.problems = append(e.problems, fmt.Sprintf("%s %q: %s", name, value, fmt.Sprintf(format, args...)))
}

// plainProblemf records a problem that names the variable only (no value to show, or a secret).
func (e *env) plainProblemf(name, format string, args ...any) {
	e.problems = append(e.problems, name+": "+fmt.Sprintf(format, args...))
}

// value returns the variable with surrounding white space removed (compose files often leave a
// trailing newline); "" means unset.
func (e *env) value(name string) string {
	return strings.TrimSpace(e.getenv(name))
}

// str returns the variable, or def when it is unset.
func (e *env) str(name, def string) string {
	if v := e.value(name); v != "" {
		return v
	}
	return def
}

// aliased returns the variable, or its alias when the variable is unset. It reports a problem
// when both are set to different values; same reports whether two values mean the same.
func (e *env) aliased(name, alias, def string, same func(a, b string) bool) (value, from string) {
	v, a := e.value(name), e.value(alias)
	switch {
	case v != "" && a != "":
		if !same(v, a) {
			e.problemf(name, v, "conflicts with %s %q: set only one of them", alias, a)
		}
		return v, name
	case v != "":
		return v, name
	case a != "":
		return a, alias
	default:
		return def, name
	}
}

// intAtLeast parses an integer variable that must be at least minimum.
func (e *env) intAtLeast(name string, def, minimum int) int {
	v := e.value(name)
	if v == "" {
		return def
	}
	return e.parseIntAtLeast(name, v, minimum, def)
}

// parseIntAtLeast parses v for the variable name; on a problem it returns def so later
// cross-checks do not report follow-on noise.
func (e *env) parseIntAtLeast(name, v string, minimum, def int) int {
	n, err := strconv.Atoi(v)
	if err != nil {
		e.problemf(name, v, "must be an integer")
		return def
	}
	if n < minimum {
		e.problemf(name, v, "must be at least %d", minimum)
		return def
	}
	return n
}

// duration parses a positive duration given as a Go duration ("1.5s", "5m") or plain seconds
// ("30", "0.5").
func (e *env) duration(name string, def time.Duration) time.Duration {
	v := e.value(name)
	if v == "" {
		return def
	}
	d, err := parseDuration(v)
	if err != nil {
		e.problemf(name, v, "%v", err)
		return def
	}
	if d <= 0 {
		e.problemf(name, v, "must be greater than zero")
		return def
	}
	return d
}

// parseDuration accepts a Go duration or a number of seconds.
func parseDuration(v string) (time.Duration, error) {
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		// Bound before converting so a huge value cannot overflow into a negative duration.
		if math.IsNaN(secs) || math.Abs(secs) > float64(1<<62)/float64(time.Second) {
			return 0, fmt.Errorf("out of range")
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("must be a duration such as 1.5s or 5m, or a number of seconds")
	}
	return d, nil
}
