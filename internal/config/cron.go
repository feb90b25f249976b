package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/robfig/cron/v3"
)

// cronParser takes 5 fields, or 6 with seconds first (upstream's CRON_EXPRESSION), and
// descriptors such as @daily and @every 1h.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron parses a cron expression the way CRON_EXPRESSION is read: 5 fields, or 6 with
// seconds first, POSIX day of week (0 and 7 are Sunday), evaluated in the local time zone (TZ)
// unless it starts with TZ=<zone>.
func ParseCron(expr string) (cron.Schedule, error) {
	fields := strings.Fields(expr)
	if len(fields) == 0 {
		return nil, fmt.Errorf("invalid cron expression: empty")
	}
	rest := fields
	if strings.HasPrefix(fields[0], "TZ=") || strings.HasPrefix(fields[0], "CRON_TZ=") {
		// robfig/cron slices past the first space here and would panic without one.
		if len(fields) == 1 {
			return nil, fmt.Errorf("invalid cron expression: no schedule after %s", fields[0])
		}
		rest = fields[1:]
	}
	if !strings.HasPrefix(rest[0], "@") && (len(rest) == 5 || len(rest) == 6) {
		last := len(fields) - 1
		fields[last] = posixDayOfWeek(fields[last])
	}
	sched, err := parseCronSafely(strings.Join(fields, " "))
	if err != nil {
		return nil, fmt.Errorf("invalid cron expression: %w", err)
	}
	return sched, nil
}

// parseCronSafely turns a parser panic into an error: bad configuration must never crash.
func parseCronSafely(spec string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return cronParser.Parse(spec)
}

// posixDayOfWeek rewrites a day-of-week field so that 7 (POSIX Sunday, which robfig/cron
// rejects) becomes 0. Items that mention 7 are expanded into plain day numbers; the rest are
// kept as they are.
func posixDayOfWeek(field string) string {
	items := strings.Split(field, ",")
	for i, item := range items {
		items[i] = posixDayOfWeekItem(item)
	}
	return strings.Join(items, ",")
}

func posixDayOfWeekItem(item string) string {
	rng, stepText, hasStep := strings.Cut(item, "/")
	lo, hi, isRange := strings.Cut(rng, "-")
	if lo != "7" && hi != "7" {
		return item
	}
	start, ok := dayOfWeek(lo)
	if !ok {
		return item // let the parser report it
	}
	end := start
	switch {
	case isRange:
		if end, ok = dayOfWeek(hi); !ok {
			return item
		}
	case hasStep:
		end = 7 // "N/step" means N to the maximum
	}
	step := 1
	if hasStep {
		n, err := strconv.Atoi(stepText)
		if err != nil || n < 1 {
			return item
		}
		step = n
	}
	if start > end {
		return item
	}
	var days []int
	for d := start; d <= end; d += step {
		days = append(days, d%7)
	}
	slices.Sort(days)
	days = slices.Compact(days)
	out := make([]string, len(days))
	for i, d := range days {
		out[i] = strconv.Itoa(d)
	}
	return strings.Join(out, ",")
}

var dayNames = map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}

// dayOfWeek reads a POSIX day of week, 0..7 or a three-letter name.
func dayOfWeek(s string) (int, bool) {
	if d, ok := dayNames[strings.ToLower(s)]; ok {
		return d, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 7 {
		return 0, false
	}
	return n, true
}
