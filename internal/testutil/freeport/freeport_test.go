package freeport

import (
	"net"
	"strconv"
	"testing"
)

// Ports come from below the ephemeral range, are bindable and never handed out twice.
func TestPortsBelowTheEphemeralRangeAndDistinct(t *testing.T) {
	low := ephemeralLow()
	seen := map[int]bool{}
	for range 200 {
		p, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if p >= low || p < low-span-1 {
			t.Fatalf("port %d outside [%d, %d)", p, low-span-1, low)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
	a, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", a)
	if err != nil {
		t.Fatalf("listen on %s: %v", a, err)
	}
	l.Close()
	if _, port, _ := net.SplitHostPort(a); port == "" || port == strconv.Itoa(0) {
		t.Fatalf("addr %q", a)
	}
}
