package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/homeindex/homeindex/internal/testutil/wait"
)

const mib = 1 << 20

// gogc reads the GOGC now in force.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(int64(s[0].Value.Uint64()))
}

// withGOGC runs the test with GOGC at p, restoring it after.
func withGOGC(t *testing.T, p int) {
	old := debug.SetGCPercent(p)
	t.Cleanup(func() { debug.SetGCPercent(old) })
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		base        int
		live, roots uint64
		want        int
	}{
		{100, 5 * mib, 0, 320},          // the headroom over a small heap
		{100, 4 * mib, 1 * mib, 320},    // the roots count as heap
		{100, 7 * mib, 0, 229},          // rounded up: never less than the headroom
		{100, 16 * mib, 0, 100},         // a heap as large as the headroom: the base
		{100, 512 * mib, 0, 100},        // a large heap: the base, no extra memory
		{100, 0, 0, 400},                // nothing live yet: the runtime's 4 MiB minimum heap
		{100, 1024, 512, 400},           // the same
		{300, 8 * mib, 0, 300},          // an operator's larger GOGC is kept
		{20000, 8 * mib, 0, maxPercent}, // bounded
	} {
		f := &Floor{headroom: 16 * mib, base: c.base}
		if got := f.Percent(c.live, c.roots); got != c.want {
			t.Errorf("base %d, live %d, roots %d: Percent = %d, want %d", c.base, c.live, c.roots, got, c.want)
		}
	}
}

// After each collection GOGC follows the live heap: the headroom's share of a small heap, the
// base once the heap outgrows the headroom, and the base again after Stop.
func TestFollowsTheLiveHeap(t *testing.T) {
	withGOGC(t, 100)
	f := Start(64 * mib)
	if f == nil {
		t.Fatal("Start returned nil with GOGC=100")
	}
	defer f.Stop()
	runtime.GC()
	wait.For(t, "GOGC raised over a small heap", func() bool { return gogc() > 100 })

	live := make([]*[mib]byte, 256) // 256 MiB live: four times the headroom
	for i := range live {
		live[i] = new([mib]byte)
	}
	wait.For(t, "GOGC back to the base over a large heap", func() bool {
		runtime.GC()
		return gogc() == 100
	})
	runtime.KeepAlive(live)
	live = nil

	wait.For(t, "GOGC raised again once the heap is small", func() bool {
		runtime.GC()
		return gogc() > 100
	})
	f.Stop()
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC = %d after Stop, want the base 100", got)
	}
	runtime.GC()
	runtime.GC()
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC = %d after Stop and two collections, want 100", got)
	}
}

// GOGC=off is the operator's choice: the floor does not turn collection back on.
func TestLeavesGOGCOffAlone(t *testing.T) {
	withGOGC(t, -1)
	if f := Start(64 * mib); f != nil {
		f.Stop()
		t.Fatal("Start tuned with GOGC=off")
	}
	if got := gogc(); got != -1 {
		t.Fatalf("GOGC = %d, want -1 (off)", got)
	}
}

// A GOGC above what the floor would set is kept.
func TestKeepsALargerBase(t *testing.T) {
	withGOGC(t, maxPercent)
	f := Start(1) // one byte of headroom: the base always wins
	defer f.Stop()
	runtime.GC()
	runtime.GC()
	if got := gogc(); got != maxPercent {
		t.Fatalf("GOGC = %d, want the operator's %d", got, maxPercent)
	}
}
