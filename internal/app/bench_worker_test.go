package app

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The pipeline benchmarks run their raw-protocol worker in a process of its own, as modules
// run in production: inside the test process it would share the daemon's GOMAXPROCS, garbage
// collector and scheduler, which a module never does. The test binary re-executes itself
// with benchWorkerEnv set to the Redis address.
const benchWorkerEnv = "HOMEINDEX_BENCH_WORKER_REDIS"

func TestMain(m *testing.M) {
	if addr := os.Getenv(benchWorkerEnv); addr != "" {
		os.Exit(runBenchWorker(addr))
	}
	os.Exit(m.Run())
}

// runBenchWorker serves module m1 with a no-op raw worker until SIGTERM, then prints its idle
// poll count.
func runBenchWorker(addr string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	w := &rawWorker{rdb: rdb, module: "m1", timeout: time.Minute,
		run: func(map[string]any) (map[string]any, any, error) { return map[string]any{"noop": true}, nil, nil }}
	w.serve(ctx)
	fmt.Printf("idle-polls %d\n", w.idle.Load())
	return 0
}

// workerStats is what a benchmark worker process reports when it ends.
type workerStats struct {
	idle int64         // polls that found no job after the first job
	cpu  time.Duration // user + system CPU of the process
}

// startWorkerProcess starts a benchmark worker process against the Redis at addr; stop ends
// it and returns its figures (errors are reported with b.Error: stop may run on any goroutine).
func startWorkerProcess(b *testing.B, addr string) (stop func() workerStats) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchWorkerEnv+"="+addr)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return func() workerStats {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		var st workerStats
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "idle-polls "); ok {
				st.idle, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		if err := cmd.Wait(); err != nil {
			b.Errorf("worker process: %v", err)
		}
		st.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		return st
	}
}

func (st *workerStats) add(o workerStats) { st.idle += o.idle; st.cpu += o.cpu }

// report adds the worker's figures per run: idle polls (5 ms each: the time it waited for the
// daemon) and its CPU (it includes the idle polls and the go-redis client).
func (st workerStats) report(b *testing.B) {
	b.ReportMetric(float64(st.idle)/float64(b.N), "idle-polls/op")
	b.ReportMetric(st.cpu.Seconds()/float64(b.N), "worker-cpu-s/op")
}
