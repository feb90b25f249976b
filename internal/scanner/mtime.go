package scanner

import "math"

// TruncateMtime returns floor(mtime_seconds*10000)/10000 for an mtime in nanoseconds: upstream's
// truncate_mtime, the value of a document's `paths` entries. It floors the integer count of
// 100 µs units, so 1700000000.1234 s exactly gives 1700000000.1234, not ...1233 as float
// multiplication can.
func TruncateMtime(ns int64) float64 {
	const unit = 100_000 // ns per 1/10000 s
	q := ns / unit
	if ns%unit < 0 {
		q-- // floor, not truncation toward zero, before 1970
	}
	return float64(q) / 10000
}

// UpstreamMtime returns st_mtime as CPython computes it from the kernel's (sec, nsec):
// float(sec) + nsec*1e-9, each step rounded to float64. Upstream HEAD stored this raw value
// in `paths`; matching it lets a legacy document be recognised without rereading the file.
func UpstreamMtime(ns int64) float64 {
	sec, nsec := ns/1e9, ns%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	// The explicit conversion forbids fusing into one FMA, which CPython's build does not do.
	return float64(sec) + float64(float64(nsec)*1e-9)
}

// UpstreamTruncateMtime is upstream's truncate_mtime applied to UpstreamMtime, float
// rounding included: what pre-a13aa25 upstream stored in `paths`. It differs from
// TruncateMtime by 0.0001 for some mtimes: often for mtimes on a 100 µs grid (exFAT's 10 ms,
// for one), where the float sum falls just below the boundary, and for a few just below one.
func UpstreamTruncateMtime(ns int64) float64 {
	return math.Floor(float64(UpstreamMtime(ns)*10000)) / 10000
}
