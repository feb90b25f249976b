package app

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/proccpu"
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
		// Every command into the slow log, to add up each script's own time (stop).
		rdb.ConfigSet(ctx, "slowlog-max-len", "1000000")
		rdb.ConfigSet(ctx, "slowlog-log-slower-than", "0")
		rdb.SlowLogReset(ctx)
	}
	m.procStart, m.rdsStart = proccpu.Used(), redisCPU(ctx, rdb)
}

// stop ends a timed part; with BENCH_REDIS_COMMANDSTATS set it prints the redis-server's
// INFO commandstats of the part (calls and CPU µs by command, Lua scripts as evalsha), then
// each script's calls and time from the slow log, named by its SHA1's start and first key.
func (m *cpuMeter) stop(ctx context.Context, rdb *redis.Client) {
	m.proc += proccpu.Used() - m.procStart
	m.redis += redisCPU(ctx, rdb) - m.rdsStart
	if os.Getenv("BENCH_REDIS_COMMANDSTATS") != "" {
		stats, _ := rdb.Info(ctx, "commandstats").Result()
		fmt.Fprint(os.Stderr, stats)
		rdb.ConfigSet(ctx, "slowlog-log-slower-than", "-1")
		logs, _ := rdb.SlowLogGet(ctx, -1).Result()
		type agg struct {
			name string
			n    int
			dur  time.Duration
		}
		by := map[string]*agg{}
		for _, l := range logs {
			if len(l.Args) < 4 || !strings.EqualFold(l.Args[0], "evalsha") || len(l.Args[1]) < 8 {
				continue
			}
			k := l.Args[1][:8] + " " + l.Args[3]
			if by[k] == nil {
				by[k] = &agg{name: k}
			}
			by[k].n++
			by[k].dur += l.Duration
		}
		aggs := slices.SortedFunc(maps.Values(by), func(a, b *agg) int { return cmp.Compare(b.dur, a.dur) })
		for _, a := range aggs {
			fmt.Fprintf(os.Stderr, "script %s: %d calls, %.1f µs/call, %.3f s\n", a.name, a.n, float64(a.dur.Microseconds())/float64(a.n), a.dur.Seconds())
		}
	}
}

func (m *cpuMeter) report(b *testing.B) {
	b.ReportMetric(m.proc.Seconds()/float64(b.N), "proc-cpu-s/op")
	b.ReportMetric(m.redis.Seconds()/float64(b.N), "redis-cpu-s/op")
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
