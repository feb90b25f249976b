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
