package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// Scenario 14, share-group rotation. Four workers of three modules in one chain:
//
//	pair-a, pair-b   gpu-pair      needs gpu            (timeout-module, 0.15 s runs)
//	both             gpu-licence   needs gpu + licence  (timeout-module, 0.1 s runs)
//	lic              licence-only  needs licence        (example-module)
//
// Over every recorded run: no two gpu users ever run at the same time, nor two licence users;
// so gpu-licence runs only while holding both. Redis agrees: sampled while runs are under way,
// the head of each group's queue is the worker running. pair-a and pair-b both get turns and
// nobody starves: every file clears the whole chain.
func TestS14ShareGroupsRotateAndCombine(t *testing.T) {
	t.Parallel()
	const (
		gpu     = "- name: gpu\n  seconds: 0.5\n"
		licence = "- name: licence\n  seconds: 0.5\n"
	)
	s := newStack(t, []module{{Name: "gpu-pair", UID: "p"}, {Name: "gpu-licence", UID: "g"}, {Name: "licence-only", UID: "l"}},
		withDaemonEnv("DISPATCH_WINDOW", "6"))
	var ids []string
	for i := range 10 {
		ids = append(ids, s.write(fmt.Sprintf("f%02d.txt", i), fmt.Sprintf("file %d", i)))
	}
	sampler := startHeadSampler(s, "gpu", "licence")
	s.Daemon.Start()
	s.startModule("pair-a", bin.timeout, "gpu-pair", "SLEEP", "0.15", "RESOURCE_SHARES", gpu)
	s.startModule("pair-b", bin.timeout, "gpu-pair", "SLEEP", "0.15", "RESOURCE_SHARES", gpu)
	s.startModule("both", bin.timeout, "gpu-licence", "SLEEP", "0.1", "RESOURCE_SHARES", gpu+licence)
	s.startModule("lic", bin.example, "licence-only", "RESOURCE_SHARES", licence)
	waitUntil(t, 90*time.Second, "every file through the chain", s.docsDone(ids, noted))
	samples := sampler.stop()

	runs := s.records().runs()
	for _, m := range []string{"gpu-pair", "gpu-licence", "licence-only"} {
		if got := runs.module(m).countBy(byPath); len(got) != len(ids) {
			t.Fatalf("%s ran %v, want every one of %d files", m, got, len(ids))
		}
	}
	gpuUsers := runs.where(func(r record) bool { return r.Worker != "lic" })
	licenceUsers := runs.where(func(r record) bool { return r.Worker == "both" || r.Worker == "lic" })
	assertNoOverlap(t, "gpu holders", gpuUsers)
	assertNoOverlap(t, "licence holders", licenceUsers)
	a, b := len(runs.worker("pair-a")), len(runs.worker("pair-b"))
	if a == 0 || b == 0 {
		t.Fatalf("gpu-pair turns: pair-a %d runs, pair-b %d runs; want both to get turns:%v", a, b, gpuUsers)
	}

	// Redis's view: a sample taken entirely inside a run shows the runner at the head of each of
	// its groups.
	inside := 0
	for _, r := range runs {
		for _, sm := range samples {
			if sm.before.Before(r.StartTime()) || sm.after.After(r.EndTime()) {
				continue
			}
			inside++
			if r.Worker != "lic" && sm.heads["gpu"] != r.Worker {
				t.Fatalf("during %v the gpu token was %q's", r, sm.heads["gpu"])
			}
			if (r.Worker == "both" || r.Worker == "lic") && sm.heads["licence"] != r.Worker {
				t.Fatalf("during %v the licence token was %q's", r, sm.heads["licence"])
			}
		}
	}
	if inside < 10 {
		t.Fatalf("only %d samples of the share queues fell inside runs: the check saw too little", inside)
	}
	t.Logf("gpu turns: %s", turnOrder(gpuUsers))
}

// headSample is the head of each group's share queue, read between before and after.
type headSample struct {
	before, after time.Time
	heads         map[string]string
}

type headSampler struct {
	stop func() []headSample
}

// startHeadSampler reads the heads of the groups' share queues in a loop (one round trip per
// sample) until stop.
func startHeadSampler(s *stack, groups ...string) headSampler {
	rdb := s.Redis.Client()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var samples []headSample
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			before := time.Now()
			pipe := rdb.Pipeline()
			cmds := make(map[string]interface{ Val() string }, len(groups))
			for _, g := range groups {
				cmds[g] = pipe.LIndex(ctx, protocol.ShareKey(g), 0)
			}
			_, _ = pipe.Exec(ctx) // an empty queue answers redis.Nil: head ""
			sm := headSample{before: before, after: time.Now(), heads: map[string]string{}}
			for g, c := range cmds {
				sm.heads[g] = c.Val()
			}
			mu.Lock()
			samples = append(samples, sm)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond) // sampling period, not synchronisation
		}
	}()
	return headSampler{stop: func() []headSample {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return samples
	}}
}

// turnOrder summarises who ran in turn, e.g. "pair-a×3 both×2 pair-b×3".
func turnOrder(rs recordSet) string {
	out := ""
	for i := 0; i < len(rs); {
		j := i
		for j < len(rs) && rs[j].Worker == rs[i].Worker {
			j++
		}
		out += fmt.Sprintf("%s×%d ", rs[i].Worker, j-i)
		i = j
	}
	return out
}
