package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/homeindex/homeindex/redisconn"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// MinRedisVersion is the oldest server Connect accepts: BLMOVE and ZRANGE...LIMIT need 6.2.
const MinRedisVersion = "6.2.0"

// Defaults for Options fields left zero.
const (
	DefaultDialTimeout = redisconn.DefaultDialTimeout
	DefaultPoolSize    = 16
)

// Options says how to reach Redis: the endpoint from the configuration and the pool's size.
type Options struct {
	redisconn.Endpoint // where and how to log in; String masks the password
	// DialTimeout bounds one connection attempt. Zero means DefaultDialTimeout.
	DialTimeout time.Duration
	// PoolSize is the maximum number of connections. Zero means DefaultPoolSize.
	PoolSize int
}

func (o Options) redisOptions() (*redis.Options, error) {
	return o.Endpoint.Options(redisconn.Pool{
		Size:           cmp.Or(o.PoolSize, DefaultPoolSize),
		DialTimeout:    o.DialTimeout,
		DialerRetries:  2, // the daemon's loops retry with their own backoff
		ContextTimeout: true,
	})
}

// Client is the daemon's handle on Redis: every key and script of the module pipeline goes
// through it. It is safe for concurrent use.
type Client struct {
	rdb *redis.Client
	// long runs the one script that may take seconds inside Redis: takeDoneScript, which
	// copies an oversized result into its quarantine record (about 2.5 s for 100 MB on an
	// idle 2-core machine). Under rdb's 3 s ReadTimeout the script's reply was cut off on a
	// loaded machine, so its work was done but its report lost: the quarantine went
	// unlogged and uncounted, and go-redis ran the script again.
	long    *redis.Client
	log     zerolog.Logger
	opts    Options
	healthy atomic.Bool
	down    atomic.Pointer[Outage] // the current outage, set when healthy turns false
	// connErrors counts commands and dials that failed for want of a connection (metrics).
	connErrors atomic.Int64
}

// Connect opens a client and checks the server: it refuses Redis older than MinRedisVersion
// and warns when maxmemory-policy is not noeviction or persistence is off. The password
// appears in no log line and no error.
func Connect(ctx context.Context, opts Options, log zerolog.Logger) (*Client, error) {
	ro, err := opts.redisOptions()
	if err != nil {
		return nil, err
	}
	long := *ro
	long.ReadTimeout, long.PoolSize = -1, 2 // the context's deadline alone bounds a reply
	// No automatic retry: when Redis runs takeDoneScript and dies before its reply arrives (the
	// append-only fsync is in that window), a retry on the restarted server takes the next
	// results and reports success, and the ones the first run moved sit in
	// modules:done:processing, unknown to the merger. The error makes the merger restore them.
	long.MaxRetries = -1
	c := &Client{rdb: redis.NewClient(ro), long: redis.NewClient(&long),
		log: log.With().Str("component", "queue").Logger(), opts: opts}
	quietRedisLog.Do(func() { redis.SetLogger(discardLogger{}) })
	c.healthy.Store(true)
	c.rdb.AddHook(healthHook{c})
	c.long.AddHook(healthHook{c})
	if err := c.checkServer(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	if err := c.loadScripts(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the connections.
func (c *Client) Close() error { return errors.Join(c.rdb.Close(), c.long.Close()) }

// Healthy reports whether the last command or dial reached Redis (for readiness).
func (c *Client) Healthy() bool { return c.healthy.Load() }

// Outage is why commands stopped reaching Redis, and since when.
type Outage struct {
	Err   string
	Since time.Time
}

// Down returns the current outage; ok is false while Redis answers.
func (c *Client) Down() (o Outage, ok bool) {
	if c.healthy.Load() {
		return Outage{}, false
	}
	if d := c.down.Load(); d != nil {
		return *d, true
	}
	return Outage{Err: "redis unreachable"}, true
}

// Ping checks that Redis answers.
func (c *Client) Ping(ctx context.Context) error {
	if err := c.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("ping redis: %w", err)
	}
	return nil
}

func (c *Client) checkServer(ctx context.Context) error {
	// HELLO (6.0+, not @dangerous) works for a least-privilege ACL user; INFO may not.
	hello, err := c.rdb.Do(ctx, "HELLO", "2").Slice()
	if err != nil {
		if strings.Contains(strings.ToLower(err.Error()), "unknown command") {
			return fmt.Errorf("%w: no HELLO command (want %s or later)", ErrRedisTooOld, MinRedisVersion)
		}
		return fmt.Errorf("connect to redis at %s: %w", c.opts.Addr, err)
	}
	version := ""
	for i := 0; i+1 < len(hello); i += 2 {
		if k, _ := hello[i].(string); k == "version" {
			version, _ = hello[i+1].(string)
		}
	}
	if !versionAtLeast(version, MinRedisVersion) {
		return fmt.Errorf("%w: %s is %q, want %s or later", ErrRedisTooOld, c.opts.Addr, version, MinRedisVersion)
	}
	c.log.Info().Str("redis", c.opts.String()).Str("version", version).Msg("redis connected")
	c.warnConfig(ctx)
	return nil
}

// warnConfig logs what makes Redis an unreliable bus: eviction and no persistence. Either is
// survivable (the catalog rebuilds Redis) but costs re-dispatches, so it warns, not refuses.
func (c *Client) warnConfig(ctx context.Context) {
	mem, err := c.rdb.Info(ctx, "memory").Result()
	if err != nil {
		c.log.Info().Err(err).Msg("cannot read redis INFO memory; maxmemory-policy not checked")
	} else if p := infoField(mem, "maxmemory_policy"); p != "" && p != "noeviction" {
		c.log.Warn().Str("maxmemory_policy", p).
			Msg("redis maxmemory-policy is not noeviction: queue items can be evicted under memory pressure; set maxmemory-policy noeviction")
	}
	aof := false
	if pers, err := c.rdb.Info(ctx, "persistence").Result(); err == nil {
		aof = infoField(pers, "aof_enabled") == "1"
	}
	if aof {
		return
	}
	save, err := c.rdb.ConfigGet(ctx, "save").Result()
	if err != nil {
		c.log.Info().Err(err).Msg("redis AOF is off and CONFIG GET save is not allowed; RDB persistence not checked")
		return
	}
	if strings.TrimSpace(save["save"]) == "" {
		c.log.Warn().Msg("redis persistence is off (no AOF, no RDB save points): a restart loses every queue; the daemon re-dispatches from its catalog")
	}
}

func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// versionAtLeast compares dotted numeric versions ("7.0.15" >= "6.2.0").
func versionAtLeast(have, want string) bool {
	h, w := strings.Split(have, "."), strings.Split(want, ".")
	for i := range w {
		var hv int
		if i < len(h) {
			n, err := strconv.Atoi(h[i])
			if err != nil {
				return false
			}
			hv = n
		}
		wv, _ := strconv.Atoi(w[i])
		if hv != wv {
			return hv > wv
		}
	}
	return true
}

// quietRedisLog installs discardLogger once per process (go-redis has one global logger).
var quietRedisLog sync.Once

// discardLogger silences go-redis's own messages, which it prints to stderr once per failed
// dial: healthHook logs each outage once, and the errors reach the callers. (Binding a
// process-wide logger to one Client's logger would outlive that client.)
type discardLogger struct{}

func (discardLogger) Printf(context.Context, string, ...any) {}

// healthHook turns connection failures into one log line per transition (lost, back), not
// one per failed command: while Redis is down every loop's command fails.
type healthHook struct{ c *Client }

func (h healthHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		h.observe(err)
		return conn, err
	}
}

func (h healthHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.observe(err)
		return err
	}
}

func (h healthHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.observe(err)
		return err
	}
}

func (h healthHook) observe(err error) {
	if err == nil || errors.Is(err, redis.Nil) {
		if !h.c.healthy.Swap(true) {
			h.c.log.Info().Str("redis", h.c.opts.String()).Msg("redis reachable again")
		}
		return
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || !isConnErr(err) {
		return // the caller gave up, or Redis replied with an error: says nothing of the link
	}
	h.c.connErrors.Add(1)
	if h.c.healthy.Load() {
		h.c.down.Store(&Outage{Err: err.Error(), Since: time.Now()})
	}
	if h.c.healthy.Swap(false) {
		h.c.log.Warn().Err(err).Str("redis", h.c.opts.String()).Msg("redis unreachable; commands fail until it is back")
	}
}

func isConnErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, redis.ErrClosed) || strings.Contains(err.Error(), "connection refused")
}
