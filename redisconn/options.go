package redisconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Pool tunes a client's connections; each program sets its own. Zero fields keep go-redis's
// defaults, except DialTimeout (DefaultDialTimeout).
type Pool struct {
	Size          int           // maximum connections
	DialTimeout   time.Duration // one connection attempt; zero means DefaultDialTimeout
	ReadTimeout   time.Duration // one reply
	DialerRetries int           // dial attempts per command before it fails
	// ContextTimeout makes commands honour their context's deadline, not only ReadTimeout.
	ContextTimeout bool
}

// DefaultDialTimeout bounds one connection attempt when Pool.DialTimeout is zero.
const DefaultDialTimeout = 5 * time.Second

// Options returns go-redis options for e: the login, TLS (with CAFile's roots when set, the
// host name checked) and the settings every client of this module shares: RESP2 (Lua
// replies convert false to nil, which the scripts rely on), two retries with short
// backoff, no CLIENT SETINFO (Redis 7.2 only) and no maintenance notifications.
func (e Endpoint) Options(p Pool) (*redis.Options, error) {
	if e.Addr == "" {
		return nil, errors.New("redis address is empty")
	}
	ro := &redis.Options{
		Addr:                  e.Addr,
		Username:              e.Username,
		Password:              e.Password,
		DB:                    e.DB,
		Protocol:              2,
		DialTimeout:           p.DialTimeout,
		ReadTimeout:           p.ReadTimeout,
		PoolSize:              p.Size,
		MaxRetries:            2,
		DialerRetries:         p.DialerRetries,
		MinRetryBackoff:       10 * time.Millisecond,
		MaxRetryBackoff:       500 * time.Millisecond,
		ContextTimeoutEnabled: p.ContextTimeout,
		DisableIdentity:       true,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	}
	if ro.DialTimeout == 0 {
		ro.DialTimeout = DefaultDialTimeout
	}
	if e.TLS {
		tc, err := e.tlsConfig()
		if err != nil {
			return nil, err
		}
		ro.TLSConfig = tc
	}
	return ro, nil
}

// tlsConfig verifies the server against CAFile (or the system roots) and its host name.
func (e Endpoint) tlsConfig() (*tls.Config, error) {
	host, _, err := net.SplitHostPort(e.Addr)
	if err != nil {
		return nil, fmt.Errorf("redis address %q: %w", e.Addr, err)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	if e.CAFile != "" {
		pem, err := os.ReadFile(e.CAFile)
		if err != nil {
			return nil, fmt.Errorf("redis CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("redis CA file %s: no PEM certificate", e.CAFile)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}
