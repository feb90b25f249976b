package httpapi

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Who may see the daemon's pages, API and files. Opening files makes the HTTP server a window
// onto the user's disk, so:
//
//   - With a token (HTTP_TOKEN), every request but /healthz carries it, as a Bearer token (the
//     CLI) or as the password of HTTP Basic authentication with any user name (a browser asks
//     for it once). Comparisons take constant time; repeated failures from one address are
//     slowed down.
//   - Without one the server listens on loopback only (config refuses other addresses unless
//     HTTP_INSECURE_NO_AUTH is set), and it answers only requests addressed to a loopback name
//     or an IP address, so a web page that rebinds its own DNS name to 127.0.0.1 cannot read
//     the API through the user's browser.
const (
	// authRealm is what a browser shows in its password prompt.
	authRealm = `Basic realm="homeindex", charset="UTF-8"`
	// freeFailures is how many wrong tokens one address may send before it is slowed down.
	freeFailures = 20
	// failureSpacing is the wait between attempts once an address is slowed down.
	failureSpacing = 3 * time.Second
	// maxTrackedAddrs bounds the failure table; when full it starts over.
	maxTrackedAddrs = 4096
)

// AuthMode configures authenticate.
type AuthMode struct {
	// Token is HTTP_TOKEN; "" means no authentication.
	Token string
	// CheckHost answers only loopback Host headers (used when there is no token and the
	// operator did not opt out with HTTP_INSECURE_NO_AUTH).
	CheckHost bool
}

// WithAuth guards every endpoint but /healthz (see AuthMode).
func WithAuth(m AuthMode) Option {
	return func(s *serverSetup) { s.auth = m }
}

// authenticate wraps next with the checks AuthMode asks for.
func authenticate(m AuthMode, next http.Handler) http.Handler {
	if m.Token == "" && !m.CheckHost {
		return next
	}
	token := []byte(m.Token)
	limiter := &failureLimiter{seen: map[string]*failures{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			next.ServeHTTP(w, r)
			return
		}
		if m.Token == "" {
			if !loopbackHost(r.Host) {
				writeError(w, http.StatusMisdirectedRequest, "this server answers only http://127.0.0.1, http://[::1] or http://localhost")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		addr := clientAddr(r)
		if wait := limiter.wait(addr, time.Now()); wait > 0 {
			w.Header().Set("Retry-After", strings.TrimSuffix(wait.Round(time.Second).String(), "s"))
			writeError(w, http.StatusTooManyRequests, "too many wrong tokens from this address; try again later")
			return
		}
		if !tokenMatches(r, token) {
			limiter.fail(addr, time.Now())
			w.Header().Set("WWW-Authenticate", authRealm)
			writeError(w, http.StatusUnauthorized, "authentication required: send the HTTP_TOKEN as a Bearer token or as the Basic password")
			return
		}
		limiter.succeed(addr)
		next.ServeHTTP(w, r)
	})
}

// tokenMatches accepts "Bearer <token>" and Basic with the token as the password.
func tokenMatches(r *http.Request, token []byte) bool {
	h := r.Header.Get("Authorization")
	var given string
	if scheme, rest, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
		given = strings.TrimSpace(rest)
	} else if _, pass, ok := r.BasicAuth(); ok {
		given = pass
	} else {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(given), token) == 1
}

// loopbackHost reports whether a Host header names this machine: an IP address (a rebinding
// page cannot make the browser send one of those for its own origin) or localhost.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if net.ParseIP(host) != nil {
		return true
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

func clientAddr(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// failureLimiter slows down an address that keeps sending wrong tokens: after freeFailures it
// may try once per failureSpacing until it gets one right.
type failureLimiter struct {
	mu   sync.Mutex
	seen map[string]*failures
}

type failures struct {
	count int
	last  time.Time
}

func (l *failureLimiter) wait(addr string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.seen[addr]
	if f == nil || f.count < freeFailures {
		return 0
	}
	if d := f.last.Add(failureSpacing).Sub(now); d > 0 {
		return d
	}
	return 0
}

func (l *failureLimiter) fail(addr string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.seen[addr]
	if f == nil {
		if len(l.seen) >= maxTrackedAddrs {
			clear(l.seen)
		}
		f = &failures{}
		l.seen[addr] = f
	}
	f.count++
	f.last = now
}

func (l *failureLimiter) succeed(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.seen, addr)
}
