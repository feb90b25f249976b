package filesync

import (
	"sync/atomic"
	"time"
)

// Progress is a snapshot of the sync in progress, safe to take from any goroutine.
type Progress struct {
	Running     bool      `json:"running"`
	Started     time.Time `json:"started,omitzero"`
	Walked      int64     `json:"walked"`        // files found so far
	WalkDone    bool      `json:"walk_done"`     // the walk finished; hashing may go on
	ToHash      int64     `json:"to_hash"`       // files sent to hashing so far
	ToHashBytes int64     `json:"to_hash_bytes"` // their bytes
	Hashed      int64     `json:"hashed"`
	HashedBytes int64     `json:"hashed_bytes"`
	// KnownFiles is how many paths the catalog held when the sync started (an estimate of
	// the walk's total on every sync but the first).
	KnownFiles int64 `json:"known_files"`
}

// progress holds the live counters behind Progress.
type progress struct {
	running                 atomic.Bool
	started                 atomic.Int64 // unix ns
	walked, toHash, toHashB atomic.Int64
	hashed, hashedB, known  atomic.Int64
	walkDone                atomic.Bool
}

func (p *progress) start(now time.Time) {
	p.walked.Store(0)
	p.toHash.Store(0)
	p.toHashB.Store(0)
	p.hashed.Store(0)
	p.hashedB.Store(0)
	p.known.Store(0)
	p.walkDone.Store(false)
	p.started.Store(now.UnixNano())
	p.running.Store(true)
}

// Progress returns the running sync's counters (Running false between syncs).
func (s *Syncer) Progress() Progress {
	p := &s.progress
	out := Progress{Running: p.running.Load()}
	if !out.Running {
		return out
	}
	out.Started = time.Unix(0, p.started.Load())
	out.Walked, out.WalkDone = p.walked.Load(), p.walkDone.Load()
	out.ToHash, out.ToHashBytes = p.toHash.Load(), p.toHashB.Load()
	out.Hashed, out.HashedBytes = p.hashed.Load(), p.hashedB.Load()
	out.KnownFiles = p.known.Load()
	return out
}
