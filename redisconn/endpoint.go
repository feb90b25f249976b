// Package redisconn is how the daemon and the worker SDK reach Redis: one Endpoint type parsed
// from REDIS_HOST, printed with the password masked, turned into go-redis options (TLS
// included) by Options, and one classification of the refusals no retry can fix (Refused).
// It is public so that the SDK, which module authors import, can use it.
package redisconn

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// DefaultPort is used when a REDIS_HOST value names no port.
const DefaultPort = "6379"

// Endpoint is a parsed REDIS_HOST (and REDIS_TLS_CA_FILE): where Redis is and how to log in.
// String never shows the password. Daemon and modules accept the same forms (Parse).
type Endpoint struct {
	Addr     string // host:port
	Username string // ACL user; "" for the default user
	Password string // secret: never logged
	DB       int    // database number, 0 unless the URL path names one
	TLS      bool   // rediss:// scheme
	CAFile   string // PEM bundle to verify a rediss:// server (REDIS_TLS_CA_FILE); "" = system roots
}

// String returns the endpoint as a redis:// or rediss:// URL with the password replaced by xxxxx.
// It is the only way this module prints an endpoint.
func (r Endpoint) String() string {
	var b strings.Builder
	if r.TLS {
		b.WriteString("rediss://")
	} else {
		b.WriteString("redis://")
	}
	if r.Username != "" || r.Password != "" {
		b.WriteString(url.User(r.Username).String())
		if r.Password != "" {
			b.WriteString(":xxxxx")
		}
		b.WriteByte('@')
	}
	b.WriteString(r.Addr)
	fmt.Fprintf(&b, "/%d", r.DB)
	return b.String()
}

// GoString keeps the password out of %#v too.
func (r Endpoint) GoString() string { return "redisconn.Endpoint(" + r.String() + ")" }

// Parse parses a REDIS_HOST value: host, host:port, redis://[user:pass@]host[:port][/db],
// rediss://… (TLS) or the upstream runtime's http://host:port (plain Redis). The port defaults
// to 6379. The error shows the value with its password replaced by xxxxx.
func Parse(s string) (Endpoint, error) {
	r, err := parse(s)
	if err != nil {
		return Endpoint{}, fmt.Errorf("redis host %q: %w", Redact(s), err)
	}
	return r, nil
}

// parse returns errors that never contain the password: when s has user info, they
// quote no part of s at all, since a password with unescaped '/' or ':' can land anywhere.
func parse(s string) (Endpoint, error) {
	secret := strings.Contains(s, "@")
	bad := func(msg, detail string) (Endpoint, error) {
		if secret || detail == "" {
			return Endpoint{}, errors.New(msg)
		}
		return Endpoint{}, fmt.Errorf("%s: %s", msg, detail)
	}
	if s == "" {
		return bad("empty", "")
	}
	if !strings.Contains(s, "://") {
		if secret {
			return bad("user and password need the redis:// or rediss:// form", "")
		}
		return parseAddr(s)
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
	var r Endpoint
	switch strings.ToLower(u.Scheme) {
	case "redis", "http": // upstream wrote http://redis:6379 and meant plain Redis
	case "rediss":
		r.TLS = true
	default:
		return Endpoint{}, fmt.Errorf("unsupported scheme %q: use redis:// or rediss://", u.Scheme)
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
		port = DefaultPort
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

// parseAddr parses host or host:port.
func parseAddr(s string) (Endpoint, error) {
	if strings.ContainsAny(s, "/?# \t") {
		return Endpoint{}, errors.New("expected host, host:port, redis://[user:password@]host:port[/db] or rediss://…")
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		// No port: a bare name, IPv4 or IPv6 address.
		host, port = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), DefaultPort
		if strings.Contains(host, ":") && net.ParseIP(host) == nil {
			return Endpoint{}, errors.New("expected host or host:port")
		}
	}
	if host == "" {
		return Endpoint{}, errors.New("missing host")
	}
	if !validPort(port) {
		return Endpoint{}, fmt.Errorf("port %q must be a number from 1 to 65535", port)
	}
	return Endpoint{Addr: net.JoinHostPort(host, port)}, nil
}

func validPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}

// Redact hides the password of a REDIS_HOST value that may not even parse: whatever
// follows the first ':' of the user info, up to the last '@', becomes xxxxx.
func Redact(s string) string {
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
			return "xxxxx" + s[at:] // no scheme: cannot tell a user from a password
		}
		return s
	}
	return s[:start] + user + ":xxxxx" + s[at:]
}
