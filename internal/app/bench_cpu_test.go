package app

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// cpuMeter adds up, over the timed parts of a benchmark, the CPU time of this test process
// (daemon and worker goroutines) and of the redis-server, so a files/s figure comes with where
// the machine's two cores went.
type cpuMeter struct {
	proc, redis         time.Duration
	procStart, rdsStart time.Duration
}

func (m *cpuMeter) start(ctx context.Context, rdb *redis.Client) {
	if os.Getenv("BENCH_REDIS_COMMANDSTATS") != "" {
		rdb.ConfigResetStat(ctx)
	}
	m.procStart, m.rdsStart = processCPU(), redisCPU(ctx, rdb)
}

// stop ends a timed part; with BENCH_REDIS_COMMANDSTATS set it prints the redis-server's
// INFO commandstats of the part (calls and CPU µs by command, Lua scripts as evalsha).
func (m *cpuMeter) stop(ctx context.Context, rdb *redis.Client) {
	m.proc += processCPU() - m.procStart
	m.redis += redisCPU(ctx, rdb) - m.rdsStart
	if os.Getenv("BENCH_REDIS_COMMANDSTATS") != "" {
		stats, _ := rdb.Info(ctx, "commandstats").Result()
		fmt.Fprint(os.Stderr, stats)
	}
}

func (m *cpuMeter) report(b *testing.B) {
	b.ReportMetric(m.proc.Seconds()/float64(b.N), "proc-cpu-s/op")
	b.ReportMetric(m.redis.Seconds()/float64(b.N), "redis-cpu-s/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisCPU is used_cpu_sys + used_cpu_user from INFO cpu.
func redisCPU(ctx context.Context, rdb *redis.Client) time.Duration {
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0
	}
	var total float64
	for _, line := range strings.Split(info, "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return time.Duration(total * float64(time.Second))
}
