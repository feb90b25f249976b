package config

import (
	"errors"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/homeindex/homeindex/internal/logging"
	"github.com/homeindex/homeindex/redisconn"
)

// Option adjusts how Load reads the environment.
type Option func(*options)

type options struct {
	stderrIsTTY bool
}

// WithTTY tells Load whether stderr is a terminal, which picks the LOG_FORMAT default
// (console on a terminal, json otherwise). Without it Load assumes no terminal.
func WithTTY(stderrIsTTY bool) Option {
	return func(o *options) { o.stderrIsTTY = stderrIsTTY }
}

var indexNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Load reads the daemon's configuration from getenv (os.Getenv in main, a map in tests). It
// validates everything and returns all problems at once as *Error. Empty variables count as
// unset. It touches nothing on disk except checking that REDIS_TLS_CA_FILE exists and reading
// HTTP_TOKEN_FILE.
func Load(getenv func(string) string, opts ...Option) (*Config, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	e := &env{getenv: getenv}
	c := &Config{}
	e.directories(c)
	e.schedule(c)
	e.meilisearch(c)
	e.http(c)
	e.logging(c, o.stderrIsTTY)
	e.modules(c)
	e.redis(c)
	e.pipeline(c)
	e.missing(c)
	e.watch(c)
	if len(e.problems) > 0 {
		return nil, &Error{Problems: e.problems}
	}
	return c, nil
}

func (e *env) schedule(c *Config) {
	c.CronExpression = e.str(envCronExpression, DefaultCronExpression)
	s, err := ParseCron(c.CronExpression)
	if err != nil {
		e.problemf(envCronExpression, c.CronExpression, "%v", err)
		return
	}
	c.Schedule = s
}

func (e *env) meilisearch(c *Config) {
	m := &c.Meilisearch
	if host := e.value(envMeiliHost); host != "" {
		u, err := url.Parse(host)
		switch {
		case err != nil, u.Scheme != "http" && u.Scheme != "https", u.Host == "" || u.Hostname() == "":
			e.problemf(envMeiliHost, host, "must be an http:// or https:// URL with a host")
		case u.User != nil, u.RawQuery != "", u.Fragment != "":
			e.problemf(envMeiliHost, host, "must not carry user info, a query or a fragment (use %s for the key)", envMeiliAPIKey)
		default:
			m.Host = strings.TrimSuffix(host, "/")
		}
	}
	m.APIKey = e.getenv(envMeiliAPIKey) // a secret is taken verbatim
	m.IndexName = e.indexName(envMeiliIndex, DefaultMeiliIndex)
	m.ChunkIndexName = e.indexName(envMeiliChunkIndex, DefaultMeiliChunkIndex)
	if m.IndexName != "" && m.IndexName == m.ChunkIndexName {
		e.problemf(envMeiliChunkIndex, m.ChunkIndexName, "must differ from %s", envMeiliIndex)
	}
}

func (e *env) indexName(name, def string) string {
	v := e.str(name, def)
	if !indexNameRE.MatchString(v) {
		e.problemf(name, v, "must match %s", indexNameRE)
		return ""
	}
	return v
}

func (e *env) http(c *Config) {
	if p := e.value(envHTTPPprof); p != "" {
		b, err := strconv.ParseBool(p)
		if err != nil {
			e.problemf(envHTTPPprof, p, "must be true or false")
		}
		c.HTTPPprof = b
	}
	v := e.str(envHTTPAddr, DefaultHTTPAddr)
	if strings.EqualFold(v, httpDisabled) {
		return // the environment cannot tell an empty value from an unset one, hence "off"
	}
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		e.problemf(envHTTPAddr, v, "must be host:port, :port, or %s to disable HTTP", httpDisabled)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		e.problemf(envHTTPAddr, v, "port must be a number from 0 to 65535")
		return
	}
	c.HTTPAddr = v
	e.httpAuth(c)
}

// minTokenLen keeps a guessable token from guarding the user's files.
const minTokenLen = 16

// httpAuth reads the token and refuses a non-loopback address that nothing guards: opening
// files makes the HTTP server a window onto the disk.
func (e *env) httpAuth(c *Config) {
	if s := e.value(envHTTPInsecure); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			e.problemf(envHTTPInsecure, s, "must be true or false")
		}
		c.HTTPInsecureNoAuth = b
	}
	token, file := e.value(envHTTPToken), e.value(envHTTPTokenFile)
	switch {
	case token != "" && file != "":
		e.plainProblemf(envHTTPToken, "set only one of %s and %s", envHTTPToken, envHTTPTokenFile)
		return
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			e.problemf(envHTTPTokenFile, file, "cannot be read: %v", errors.Unwrap(err))
			return
		}
		token, _, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
		token = strings.TrimSpace(token)
		if token == "" {
			e.problemf(envHTTPTokenFile, file, "is empty")
			return
		}
	}
	if token != "" && len(token) < minTokenLen {
		e.plainProblemf(envHTTPToken, "must be at least %d characters (try: openssl rand -hex 16)", minTokenLen)
		return
	}
	if strings.ContainsFunc(token, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		e.plainProblemf(envHTTPToken, "must be printable ASCII without spaces")
		return
	}
	c.HTTPToken = token
	if token == "" && !c.HTTPInsecureNoAuth && !LoopbackAddr(c.HTTPAddr) {
		e.problemf(envHTTPAddr, c.HTTPAddr, "is reachable from other machines: set %s or %s "+
			"(anyone who reaches it can read your files), or %s=true if a proxy in front authenticates",
			envHTTPToken, envHTTPTokenFile, envHTTPInsecure)
	}
}

// LoopbackAddr reports whether a host:port listens on loopback only: localhost or a loopback
// IP. An empty host (":8080") is every interface; other names may resolve anywhere.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (e *env) logging(c *Config, stderrIsTTY bool) {
	level := e.str(envLoggingLevel, defaultLogLevelString)
	if l, err := logging.ParseLevel(level); err != nil {
		e.problemf(envLoggingLevel, level, "must be debug, info, warn or error")
	} else {
		c.LogLevel = l.String()
	}

	def := logging.FormatJSON
	if stderrIsTTY {
		def = logging.FormatConsole
	}
	format := strings.ToLower(e.str(envLogFormat, def))
	if format != logging.FormatJSON && format != logging.FormatConsole {
		e.problemf(envLogFormat, e.value(envLogFormat), "must be %s or %s", logging.FormatJSON, logging.FormatConsole)
		return
	}
	c.LogFormat = format
}

// redis parses REDIS_HOST whether or not modules are configured: a bad value is a problem
// either way, and the default (redis:6379) is only dialled when there are modules.
func (e *env) redis(c *Config) {
	raw := e.str(envRedisHost, DefaultRedisHost)
	r, err := parseRedisHost(raw)
	if err != nil {
		e.problemf(envRedisHost, redisconn.Redact(raw), "%v", err)
	}
	if ca := e.value(envRedisTLSCAFile); ca != "" {
		switch st, statErr := os.Stat(ca); {
		case statErr != nil:
			e.problemf(envRedisTLSCAFile, ca, "cannot be read: %v", unwrapPathError(statErr))
		case st.IsDir():
			e.problemf(envRedisTLSCAFile, ca, "is a directory, not a PEM file")
		case err == nil && !r.TLS:
			e.problemf(envRedisTLSCAFile, ca, "is set but %s does not use rediss://", envRedisHost)
		default:
			r.CAFile = ca
		}
	}
	if err == nil {
		c.Redis = r
	}
}

// unwrapPathError drops the path that os.PathError repeats; the problem names it already.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (e *env) pipeline(c *Config) {
	p := &c.Pipeline
	p.DispatchWindow = e.intAtLeast(envDispatchWindow, DefaultDispatchWindow, 1)
	p.ReapInterval = e.duration(envReapInterval, DefaultReapInterval)
	p.RetryBase = e.duration(envRetryBase, DefaultRetryBase)
	p.RetryMax = e.duration(envRetryMax, DefaultRetryMax)
	if p.RetryMax < p.RetryBase {
		e.problemf(envRetryMax, e.str(envRetryMax, DefaultRetryMax.String()), "must be at least %s (%s)", envRetryBase, p.RetryBase)
	}
	p.MaxAttempts = e.intAtLeast(envMaxAttempts, DefaultMaxAttempts, 1)

	tokens, tokensVar := e.aliased(envChunkTokens, envTokensPerChunk, "", sameText)
	p.ChunkTokens = DefaultChunkTokens
	if tokens != "" {
		p.ChunkTokens = e.parseIntAtLeast(tokensVar, tokens, 1, DefaultChunkTokens)
	}
	p.ChunkOverlap = e.intAtLeast(envChunkOverlap, DefaultChunkOverlap, 0)
	if p.ChunkOverlap >= p.ChunkTokens {
		e.problemf(envChunkOverlap, strconv.Itoa(p.ChunkOverlap), "must be less than %s (%d)", envChunkTokens, p.ChunkTokens)
	}

	workers, workersVar := e.aliased(envHashWorkers, envMaxHashWorkers, "", sameText)
	p.HashWorkers = DefaultHashWorkers
	if workers != "" {
		p.HashWorkers = e.parseIntAtLeast(workersVar, workers, 0, DefaultHashWorkers)
	}
	p.FailedMax = e.intAtLeast(envFailedMax, DefaultFailedMax, 1)
}

func sameText(a, b string) bool { return a == b }
