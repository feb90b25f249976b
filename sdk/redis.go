package sdk

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// newRedisClient opens the worker's connection pool. Blocking waits use their own connections
// (one per watched list), so the pool holds a few more than the worker's one-at-a-time work.
func newRedisClient(c Config) (*redis.Client, error) {
	ro := &redis.Options{
		Addr:            c.Redis.Addr,
		Username:        c.Redis.Username,
		Password:        c.Redis.Password,
		DB:              c.Redis.DB,
		Protocol:        2, // classic Lua reply conversion (false -> nil)
		DialTimeout:     5 * time.Second,
		ReadTimeout:     10 * time.Second,
		PoolSize:        8,
		MaxRetries:      2,
		MinRetryBackoff: 10 * time.Millisecond,
		MaxRetryBackoff: 500 * time.Millisecond,
		DisableIdentity: true, // CLIENT SETINFO needs Redis 7.2
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	}
	if c.Redis.TLS {
		host, _, err := net.SplitHostPort(c.Redis.Addr)
		if err != nil {
			return nil, fmt.Errorf("redis address %q: %w", c.Redis.Addr, err)
		}
		tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
		if c.RedisCAFile != "" {
			pem, err := os.ReadFile(c.RedisCAFile)
			if err != nil {
				return nil, fmt.Errorf("redis CA file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("redis CA file %s: no PEM certificate", c.RedisCAFile)
			}
			tc.RootCAs = pool
		}
		ro.TLSConfig = tc
	}
	return redis.NewClient(ro), nil
}
