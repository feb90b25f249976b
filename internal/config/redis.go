package config

import (
	"errors"

	"github.com/homeindex/homeindex/protocol"
)

// DefaultRedisPort is used when REDIS_HOST names no port.
const DefaultRedisPort = protocol.DefaultRedisPort

// RedisConfig is where Redis is and how to log in. String and Redacted never show the password.
type RedisConfig struct {
	Addr     string // host:port
	Username string // ACL user; "" for the default user
	Password string // secret: never logged
	DB       int    // database number, 0 unless the URL path names one
	TLS      bool   // rediss:// scheme
	CAFile   string // PEM bundle to verify the server (REDIS_TLS_CA_FILE); "" = system roots
}

func (r RedisConfig) endpoint() protocol.RedisEndpoint {
	return protocol.RedisEndpoint{Addr: r.Addr, Username: r.Username, Password: r.Password, DB: r.DB, TLS: r.TLS}
}

// Redacted returns the connection as a redis:// or rediss:// URL with the password replaced by ***.
func (r RedisConfig) Redacted() string { return r.endpoint().String() }

// String is Redacted, so a RedisConfig can be logged safely.
func (r RedisConfig) String() string { return r.Redacted() }

// GoString keeps the password out of %#v too.
func (r RedisConfig) GoString() string { return "config.RedisConfig(" + r.Redacted() + ")" }

// ParseRedisHost parses REDIS_HOST with the rules daemon and modules share
// (protocol.ParseRedisHost): host, host:port, redis://[user:pass@]host[:port][/db], rediss://…
// (TLS) or upstream's http://host:port (plain Redis). The error never shows the password.
func ParseRedisHost(s string) (RedisConfig, error) {
	ep, err := protocol.ParseRedisHost(s)
	if err != nil {
		return RedisConfig{}, err
	}
	return RedisConfig{Addr: ep.Addr, Username: ep.Username, Password: ep.Password, DB: ep.DB, TLS: ep.TLS}, nil
}

// parseRedisHost is ParseRedisHost with the error's "redis host %q" prefix removed (the
// problem list names the variable and the redacted value itself).
func parseRedisHost(s string) (RedisConfig, error) {
	r, err := ParseRedisHost(s)
	if u := errors.Unwrap(err); u != nil {
		err = u
	}
	return r, err
}

func redactRedisHost(s string) string { return protocol.RedactRedisHost(s) }
