package protocol

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// DefaultRedisPort is used when a REDIS_HOST value names no port.
const DefaultRedisPort = "6379"

// RedisEndpoint is a parsed REDIS_HOST: where Redis is and how to log in. String never shows
// the password. Daemon and modules accept the same forms (ParseRedisHost).
type RedisEndpoint struct {
	Addr     string // host:port
	Username string // ACL user; "" for the default user
	Password string // secret: never logged
	DB       int    // database number, 0 unless the URL path names one
	TLS      bool   // rediss:// scheme
}

// String returns the endpoint as a redis:// or rediss:// URL with the password replaced by ***.
func (r RedisEndpoint) String() string {
	var b strings.Builder
	if r.TLS {
		b.WriteString("rediss://")
	} else {
		b.WriteString("redis://")
	}
	if r.Username != "" || r.Password != "" {
		b.WriteString(url.User(r.Username).String())
		if r.Password != "" {
			b.WriteString(":***")
		}
		b.WriteByte('@')
	}
	b.WriteString(r.Addr)
	fmt.Fprintf(&b, "/%d", r.DB)
	return b.String()
}

// GoString keeps the password out of %#v too.
func (r RedisEndpoint) GoString() string { return "protocol.RedisEndpoint(" + r.String() + ")" }

// ParseRedisHost parses a REDIS_HOST value: host, host:port, redis://[user:pass@]host[:port][/db],
// rediss://… (TLS) or the upstream runtime's http://host:port (plain Redis). The port defaults
// to 6379. The error shows the value with its password replaced by ***.
func ParseRedisHost(s string) (RedisEndpoint, error) {
	r, err := parseRedisHost(s)
	if err != nil {
		return RedisEndpoint{}, fmt.Errorf("redis host %q: %w", RedactRedisHost(s), err)
	}
	return r, nil
}

// parseRedisHost returns errors that never contain the password: when s has user info, they
// quote no part of s at all, since a password with unescaped '/' or ':' can land anywhere.
func parseRedisHost(s string) (RedisEndpoint, error) {
	secret := strings.Contains(s, "@")
	bad := func(msg, detail string) (RedisEndpoint, error) {
		if secret || detail == "" {
			return RedisEndpoint{}, errors.New(msg)
		}
		return RedisEndpoint{}, fmt.Errorf("%s: %s", msg, detail)
	}
	if s == "" {
		return bad("empty", "")
	}
	if !strings.Contains(s, "://") {
		if secret {
			return bad("user and password need the redis:// or rediss:// form", "")
		}
		return parseRedisAddr(s)
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the whole URL
		}
		if secret {
			return bad("invalid URL (percent-encode special characters in the user and password)", "")
		}
		return bad("invalid URL", err.Error())
	}
	var r RedisEndpoint
	switch strings.ToLower(u.Scheme) {
	case "redis", "http": // upstream wrote http://redis:6379 and meant plain Redis
	case "rediss":
		r.TLS = true
	default:
		return RedisEndpoint{}, fmt.Errorf("unsupported scheme %q: use redis:// or rediss://", u.Scheme)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return bad("query parameters and fragments are not supported", "")
	}
	if u.User != nil {
		r.Username = u.User.Username()
		r.Password, _ = u.User.Password()
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return bad("missing host", "")
	}
	if port == "" {
		port = DefaultRedisPort
	}
	if !validPort(port) {
		return bad("port must be a number from 1 to 65535", strconv.Quote(port))
	}
	r.Addr = net.JoinHostPort(host, port)
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return bad("database must be a number ≥ 0", strconv.Quote(db))
		}
		r.DB = n
	}
	return r, nil
}

// parseRedisAddr parses host or host:port.
func parseRedisAddr(s string) (RedisEndpoint, error) {
	if strings.ContainsAny(s, "/?# \t") {
		return RedisEndpoint{}, errors.New("expected host, host:port, redis://[user:password@]host:port[/db] or rediss://…")
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		// No port: a bare name, IPv4 or IPv6 address.
		host, port = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), DefaultRedisPort
		if strings.Contains(host, ":") && net.ParseIP(host) == nil {
			return RedisEndpoint{}, errors.New("expected host or host:port")
		}
	}
	if host == "" {
		return RedisEndpoint{}, errors.New("missing host")
	}
	if !validPort(port) {
		return RedisEndpoint{}, fmt.Errorf("port %q must be a number from 1 to 65535", port)
	}
	return RedisEndpoint{Addr: net.JoinHostPort(host, port)}, nil
}

func validPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}

// RedactRedisHost hides the password of a REDIS_HOST value that may not even parse: whatever
// follows the first ':' of the user info, up to the last '@', becomes ***.
func RedactRedisHost(s string) string {
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return s
	}
	start := 0
	if i := strings.Index(s, "://"); i >= 0 && i < at {
		start = i + len("://")
	}
	user, _, hasPassword := strings.Cut(s[start:at], ":")
	if !hasPassword {
		if start == 0 {
			return "***" + s[at:] // no scheme: cannot tell a user from a password
		}
		return s
	}
	return s[:start] + user + ":***" + s[at:]
}
