package scanner

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
