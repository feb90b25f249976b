package filesync

import "time"

// MBps is the hashing throughput of a running sync, in MB (10^6 bytes) per second.
func (p Progress) MBps(now time.Time) float64 {
	el := now.Sub(p.Started).Seconds()
	if el <= 0 {
		return 0
	}
	return float64(p.HashedBytes) / 1e6 / el
}

// ETA estimates how long a running sync has left: once the walk is done, the bytes left
// to hash at the hashing rate so far; while walking, the files the catalog knew and the walk
// has not reached yet at the walk's rate (or the hashing backlog if longer). ok is false when
// nothing supports an estimate (a first sync still walking, nothing hashed yet).
func (p Progress) ETA(now time.Time) (time.Duration, bool) {
	el := now.Sub(p.Started)
	if !p.Running || el <= 0 {
		return 0, false
	}
	left := p.ToHashBytes - p.HashedBytes
	var hash time.Duration
	hashKnown := left == 0
	if left > 0 && p.HashedBytes > 0 {
		hash = time.Duration(float64(el) * float64(left) / float64(p.HashedBytes))
		hashKnown = true
	}
	if p.WalkDone {
		return hash, hashKnown
	}
	if p.KnownFiles <= p.Walked || p.Walked == 0 {
		return 0, false
	}
	walk := time.Duration(float64(el) * float64(p.KnownFiles-p.Walked) / float64(p.Walked))
	if hashKnown {
		return max(walk, hash), true
	}
	return walk, true
}
