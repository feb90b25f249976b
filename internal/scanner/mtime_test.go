package scanner

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestTruncateMtime(t *testing.T) {
	tests := []struct {
		ns   int64
		want float64
	}{
		{1700000000_123456789, 1700000000.1234},
		{1700000000_123400000, 1700000000.1234}, // exact boundary: float multiply would give ...1233
		{1700000000_123399999, 1700000000.1233},
		{1700000000_999999999, 1700000000.9999},
		{1700000000_000000000, 1700000000},
		{0, 0},
		{99_999, 0},
		{-1, -0.0001}, // floor, before 1970
		{-100_000, -0.0001},
		{-100_001, -0.0002},
	}
	for _, tt := range tests {
		if got := TruncateMtime(tt.ns); got != tt.want {
			t.Errorf("TruncateMtime(%d) = %.10f, want %.10f", tt.ns, got, tt.want)
		}
	}
}

func TestTruncateMtimeIsNearestFloatToExactFloor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tenK := big.NewRat(10000, 1)
	for range 20000 {
		ns := rng.Int64N(4_000_000_000_000_000_000) - 1_000_000_000_000_000_000
		// Exact: floor(ns * 10000 / 1e9) / 10000, rounded once to float64.
		units := new(big.Rat).Mul(big.NewRat(ns, 1_000_000_000), tenK)
		q := new(big.Int).Div(units.Num(), units.Denom()) // Euclidean: floor for positive Denom
		want, _ := new(big.Rat).SetFrac(q, big.NewInt(10000)).Float64()
		if got := TruncateMtime(ns); got != want {
			t.Fatalf("TruncateMtime(%d) = %v, want %v", ns, got, want)
		}
	}
}

func TestUpstreamMtimeMatchesCPython(t *testing.T) {
	// Rows from CPython 3.11: os.utime(p, ns=(ns, ns)); m = os.stat(p).st_mtime;
	// math.floor(m*10000)/10000. The first two show float truncation landing below the exact
	// floor, the next two above it.
	tests := []struct {
		ns                   int64
		stMtime, pyTruncated float64
		exact                float64
	}{
		{1529891364_554700000, 1529891364.5547, 1529891364.5546, 1529891364.5547},
		{1505233335_360000000, 1505233335.36, 1505233335.3599, 1505233335.36},
		{1716925513_447099963, 1716925513.4471, 1716925513.4471, 1716925513.447},
		{1744985113_078099929, 1744985113.0781, 1744985113.0781, 1744985113.078},
		{1700000000_123456789, 1700000000.1234567, 1700000000.1234, 1700000000.1234},
		{1700000000_123400000, 1700000000.1234, 1700000000.1234, 1700000000.1234},
		{1700000000_000000000, 1700000000, 1700000000, 1700000000},
	}
	for _, tt := range tests {
		if got := UpstreamMtime(tt.ns); got != tt.stMtime {
			t.Errorf("UpstreamMtime(%d) = %v, want %v", tt.ns, got, tt.stMtime)
		}
		if got := UpstreamTruncateMtime(tt.ns); got != tt.pyTruncated {
			t.Errorf("UpstreamTruncateMtime(%d) = %v, want %v", tt.ns, got, tt.pyTruncated)
		}
		if got := TruncateMtime(tt.ns); got != tt.exact {
			t.Errorf("TruncateMtime(%d) = %v, want %v", tt.ns, got, tt.exact)
		}
	}
}
