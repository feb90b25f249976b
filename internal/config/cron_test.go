package config

import (
	"strings"
	"testing"
	"time"
)

// wednesday is a fixed start: 2025-01-01 was a Wednesday.
var wednesday = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// nextTimes returns the next n fire times after from.
func nextTimes(t *testing.T, expr string, from time.Time, n int) []time.Time {
	t.Helper()
	s, err := ParseCron(expr)
	if err != nil {
		t.Fatalf("ParseCron(%q): %v", expr, err)
	}
	var out []time.Time
	for range n {
		from = s.Next(from)
		out = append(out, from)
	}
	return out
}

func TestParseCronFiveFields(t *testing.T) {
	t.Parallel()
	got := nextTimes(t, "0 2 * * *", wednesday, 2)
	want := []time.Time{
		time.Date(2025, 1, 2, 2, 0, 0, 0, time.UTC),
		time.Date(2025, 1, 3, 2, 0, 0, 0, time.UTC),
	}
	if !got[0].Equal(want[0]) || !got[1].Equal(want[1]) {
		t.Errorf("next = %v, want %v", got, want)
	}
}

func TestParseCronSecondsFirst(t *testing.T) {
	t.Parallel()
	got := nextTimes(t, "*/2 * * * * *", wednesday, 3)
	for i, g := range got {
		if want := wednesday.Add(time.Duration(2*(i+1)) * time.Second); !g.Equal(want) {
			t.Errorf("fire %d at %v, want %v", i, g, want)
		}
	}
	// Seconds come first: "30 5 * * * *" is second 30 of minute 5 of every hour.
	if got := nextTimes(t, "30 5 * * * *", wednesday, 1)[0]; !got.Equal(time.Date(2025, 1, 1, 12, 5, 30, 0, time.UTC)) {
		t.Errorf("30 5 * * * * fires at %v, want 12:05:30", got)
	}
}

func TestParseCronPOSIXDayOfWeek(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want []time.Weekday
	}{
		{"0 0 * * 0", []time.Weekday{time.Sunday, time.Sunday}},
		{"0 0 * * 7", []time.Weekday{time.Sunday, time.Sunday}},
		{"0 0 * * sun", []time.Weekday{time.Sunday}},
		{"0 0 * * 1", []time.Weekday{time.Monday}},
		{"0 0 * * 5-7", []time.Weekday{time.Friday, time.Saturday, time.Sunday, time.Friday}},
		{"0 0 * * 6,7", []time.Weekday{time.Saturday, time.Sunday, time.Saturday}},
		{"0 0 * * 1-7/3", []time.Weekday{time.Thursday, time.Sunday, time.Monday, time.Thursday}},
		{"0 0 0 * * 7", []time.Weekday{time.Sunday}},
		{"TZ=UTC 0 0 * * 7", []time.Weekday{time.Sunday}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			for i, next := range nextTimes(t, tt.expr, wednesday, len(tt.want)) {
				if next.Weekday() != tt.want[i] {
					t.Errorf("fire %d at %v (%s), want a %s", i, next, next.Weekday(), tt.want[i])
				}
			}
		})
	}
}

func TestParseCronErrors(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{"", "bad cron", "* * * *", "0 0 0 * * * *", "0 0 * * 8", "0 0 * * 7-1", "60 * * * *", "TZ=UTC", "@every x"} {
		t.Run(expr, func(t *testing.T) {
			t.Parallel()
			if _, err := ParseCron(expr); err == nil || !strings.Contains(err.Error(), "invalid cron expression") {
				t.Errorf("ParseCron(%q) error = %v, want one containing \"invalid cron expression\"", expr, err)
			}
		})
	}
}
