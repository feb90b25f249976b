package main

import "testing"

// An operator's GOGC is taken as it is; without one the daemon paces its collector for a
// small live heap.
func TestGCFloorOnlyWithoutGOGC(t *testing.T) {
	withGOGC := func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	}
	if f := startGCFloor(withGOGC); f != nil {
		f.Stop()
		t.Fatal("the floor started although GOGC is set")
	}
	f := startGCFloor(func(string) string { return "" })
	if f == nil {
		t.Fatal("no floor without GOGC")
	}
	f.Stop()
}
