package ops

import (
	"testing"
	"time"
)

// Rates counts finished jobs in 10 s buckets: the last minute and the last five minutes, and
// forgets what is older.
func TestRatesWindow(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	r := NewRates(t0)
	for i := range 10 { // one job every 30 s for five minutes
		r.Observe("m", t0.Add(time.Duration(i)*30*time.Second))
	}
	w := r.Window("m", t0.Add(299*time.Second))
	if w.Last5 != 10 || w.LastMinute != 2 || w.Total != 10 || w.Span != 299*time.Second {
		t.Fatalf("window = %+v, want 10 in five minutes, 2 in the last minute, span 299s", w)
	}
	later := r.Window("m", t0.Add(20*time.Minute))
	if later.Last5 != 0 || later.LastMinute != 0 || later.Total != 10 || later.Span != 5*time.Minute {
		t.Fatalf("window after 20 minutes = %+v, want nothing recent, total 10", later)
	}
	if w := r.Window("other", t0.Add(time.Minute)); w.Total != 0 || w.Last5 != 0 {
		t.Fatalf("unknown module window = %+v, want zero", w)
	}
}

// The ETA is "unknown" until it is stable, and then backlog ÷ the five-minute rate.
func TestETA(t *testing.T) {
	t.Parallel()
	steady := Window{LastMinute: 60, Last5: 300, Span: 5 * time.Minute} // 1 job/s
	for _, tc := range []struct {
		name    string
		backlog int64
		w       Window
		paused  bool
		want    time.Duration
		ok      bool
	}{
		{"nothing left", 0, Window{}, false, 0, true},
		{"steady", 120, steady, false, 2 * time.Minute, true},
		{"paused", 120, steady, true, 0, false},
		{"under a minute observed", 120, Window{LastMinute: 30, Last5: 30, Span: 30 * time.Second}, false, 0, false},
		{"too few jobs", 120, Window{LastMinute: 2, Last5: 4, Span: 5 * time.Minute}, false, 0, false},
		{"stalled in the last minute", 120, Window{LastMinute: 0, Last5: 300, Span: 5 * time.Minute}, false, 0, false},
		{"last minute far slower", 120, Window{LastMinute: 20, Last5: 300, Span: 5 * time.Minute}, false, 0, false},
		{"last minute far faster", 120, Window{LastMinute: 150, Last5: 300, Span: 5 * time.Minute}, false, 0, false},
		{"one minute observed", 60, Window{LastMinute: 30, Last5: 30, Span: time.Minute}, false, 2 * time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ETA(tc.backlog, tc.w, tc.paused)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("ETA(%d, %+v, %v) = %v, %v; want %v, %v", tc.backlog, tc.w, tc.paused, got, ok, tc.want, tc.ok)
			}
		})
	}
}
