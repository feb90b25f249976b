package scanner

import (
	"context"
	"runtime"
	"sync"
)

// Hasher hashes many files with bounded parallelism.
type Hasher struct {
	// Workers is the number of files hashed at once; zero means max(2, runtime.NumCPU()).
	Workers int
}

// HashJob is one file to hash. Ref is passed back untouched in its HashResult.
type HashJob struct {
	Path string
	Ref  any
	// Detect asks for the file's type too (HashResult.Type), from the bytes hashed: no
	// second open and read, and the type of the very content the id names.
	Detect bool
}

// HashResult is the outcome of one HashJob: what HashFile returned for Job.Path.
type HashResult struct {
	Job  HashJob
	ID   string
	Type string // with Job.Detect and no Err: what DetectType says of the content hashed
	Stat FileStat
	Err  error
}

// Run hashes every job received from jobs until jobs is closed or ctx is done, sending one
// result per job to out in completion order, and closes out when its workers have returned.
//
// When ctx is done, Run stops taking jobs, abandons the files being hashed (within one read
// buffer) and drops their results; jobs not yet received are left in the channel, so a
// producer must select on ctx too.
func (h Hasher) Run(ctx context.Context, jobs <-chan HashJob, out chan<- HashResult) {
	defer close(out)
	n := h.Workers
	if n <= 0 {
		n = max(2, runtime.NumCPU())
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { hashWorker(ctx, jobs, out) })
	}
	wg.Wait()
}

func hashWorker(ctx context.Context, jobs <-chan HashJob, out chan<- HashResult) {
	head := make([]byte, detectLimit)
	for {
		// Checked first: select picks at random when a job and cancellation are both ready.
		if ctx.Err() != nil {
			return
		}
		var job HashJob
		select {
		case <-ctx.Done():
			return
		case j, ok := <-jobs:
			if !ok {
				return
			}
			job = j
		}
		res := HashResult{Job: job}
		var want []byte // the head is copied out of the reads only when the type is asked for
		if job.Detect {
			want = head
		}
		var n int
		res.ID, res.Stat, n, res.Err = hashFileHead(ctx, job.Path, want)
		if ctx.Err() != nil {
			return
		}
		if job.Detect && res.Err == nil {
			res.Type = detectHead(job.Path, head[:n])
		}
		select {
		case out <- res:
		case <-ctx.Done():
			return
		}
	}
}
