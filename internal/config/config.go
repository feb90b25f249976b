// Package config reads and validates homeindexd's environment. Load reports every problem at
// once; nothing else in the daemon reads the environment.
package config

import (
	"strings"
	"time"

	"github.com/homeindex/homeindex/internal/queue"
	"github.com/homeindex/homeindex/internal/reaper"
	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
	"github.com/robfig/cron/v3"
)

// Environment variable names.
const (
	envIndexDirectory     = "INDEX_DIRECTORY"
	envFilesDirectory     = "FILES_DIRECTORY" // upstream module runtime's name for the same root
	envMetadataDirectory  = "METADATA_DIRECTORY"
	envStateDirectory     = "STATE_DIRECTORY"
	envArchiveDirectory   = "ARCHIVE_DIRECTORY"
	envCronExpression     = "CRON_EXPRESSION"
	envMeiliHost          = "MEILISEARCH_HOST"
	envMeiliAPIKey        = "MEILISEARCH_API_KEY"
	envMeiliIndex         = "MEILISEARCH_INDEX_NAME"
	envMeiliChunkIndex    = "MEILISEARCH_CHUNK_INDEX_NAME"
	envHTTPAddr           = "HTTP_ADDR"
	envHTTPPprof          = "HTTP_PPROF"
	envHTTPToken          = "HTTP_TOKEN"
	envHTTPTokenFile      = "HTTP_TOKEN_FILE"
	envHTTPInsecure       = "HTTP_INSECURE_NO_AUTH"
	envLoggingLevel       = "LOGGING_LEVEL"
	envLogFormat          = "LOG_FORMAT"
	envModules            = protocol.EnvModules
	envRedisHost          = "REDIS_HOST"
	envRedisTLSCAFile     = "REDIS_TLS_CA_FILE"
	envDispatchWindow     = "DISPATCH_WINDOW"
	envReapInterval       = "REAP_INTERVAL"
	envRetryBase          = "RETRY_BASE"
	envRetryMax           = "RETRY_MAX"
	envMaxAttempts        = "MAX_ATTEMPTS"
	envChunkTokens        = "CHUNK_TOKENS"
	envTokensPerChunk     = "TOKENS_PER_CHUNK" // upstream's name for CHUNK_TOKENS
	envChunkOverlap       = "CHUNK_OVERLAP"
	envHashWorkers        = "HASH_WORKERS"
	envMaxHashWorkers     = "MAX_HASH_WORKERS" // upstream's name for HASH_WORKERS
	envFailedMax          = "FAILED_MAX"
	httpDisabled          = "off"
	redactedSecret        = "xxxxx"
	defaultLogLevelString = "info"
)

// Defaults, applied when a variable is unset or empty.
const (
	DefaultIndexDirectory    = "/files"
	DefaultMetadataDirectory = "/home-index/metadata"
	DefaultStateDirectory    = "/home-index"
	DefaultArchiveName       = "archive" // ARCHIVE_DIRECTORY defaults to $INDEX_DIRECTORY/archive
	DefaultCronExpression    = "0 2 * * *"
	DefaultMeiliIndex        = "files"
	DefaultMeiliChunkIndex   = "file_chunks"
	DefaultHTTPAddr          = "127.0.0.1:8080"
	DefaultRedisHost         = "redis"
	DefaultDispatchWindow    = 256                    // 64 left fast modules latency-bound: docs/decisions.md, "Refills"
	DefaultReapInterval      = reaper.DefaultInterval // the reaper owns its defaults
	DefaultRetryBase         = queue.DefaultRetryBase // the retry policy lives in queue
	DefaultRetryMax          = queue.DefaultRetryMax
	DefaultMaxAttempts       = queue.DefaultMaxAttempts
	DefaultChunkTokens       = 510
	DefaultChunkOverlap      = 50
	DefaultHashWorkers       = 0 // auto
	DefaultFailedMax         = 10000
)

// Config is the daemon's validated configuration.
type Config struct {
	IndexDirectory    string // INDEX_DIRECTORY (alias FILES_DIRECTORY), absolute and clean; default /files
	MetadataDirectory string // METADATA_DIRECTORY; default /home-index/metadata
	StateDirectory    string // STATE_DIRECTORY: catalog and modules_state.json; default /home-index
	ArchiveDirectory  string // ARCHIVE_DIRECTORY: one subdirectory per drive; default $INDEX_DIRECTORY/archive

	// indexVar names the variable IndexDirectory came from (INDEX_DIRECTORY or its alias).
	indexVar string

	// ArchiveRel is ArchiveDirectory relative to IndexDirectory, slash-separated, never "".
	ArchiveRel string
	// MetadataRel is MetadataDirectory relative to IndexDirectory, or "" when it lies outside:
	// the walk skips it.
	MetadataRel string
	// StateRel is StateDirectory relative to IndexDirectory, or "" when it lies outside: the
	// walk skips it too.
	StateRel string

	CronExpression string        // CRON_EXPRESSION as given; default "0 2 * * *"
	Schedule       cron.Schedule // CronExpression parsed (see ParseCron)

	Meilisearch Meilisearch // MEILISEARCH_*: Host "" means the embedded search backend

	// HTTPAddr is HTTP_ADDR, host:port; "" (HTTP_ADDR=off) disables HTTP. Default 127.0.0.1:8080.
	HTTPAddr string
	// HTTPPprof is HTTP_PPROF: serve /debug/pprof/ (true or false; default false).
	HTTPPprof bool
	// HTTPToken is HTTP_TOKEN, or the first line of HTTP_TOKEN_FILE: every request but
	// /healthz must carry it (Bearer, or as the Basic password). "" means no authentication,
	// which Load allows only on a loopback HTTP_ADDR or with HTTPInsecureNoAuth.
	HTTPToken string
	// HTTPInsecureNoAuth is HTTP_INSECURE_NO_AUTH: serve a non-loopback HTTP_ADDR without a
	// token (behind an authenticating proxy, say). Default false.
	HTTPInsecureNoAuth bool

	LogLevel  string // LOGGING_LEVEL: debug, info, warn or error; default info
	LogFormat string // LOG_FORMAT: json or console; default console on a terminal, else json

	Modules []Module           // MODULES in pipeline order; empty = no modules
	Redis   redisconn.Endpoint // REDIS_HOST and REDIS_TLS_CA_FILE; default redis:6379

	Pipeline Pipeline // dispatch, retry and chunking tuning

	Missing Missing // MISSING_RETENTION, MISSING_HOLD_SHARE, MISSING_HOLD_MIN
	Watch   Watch   // WATCH_LIMIT, REWALK_INTERVAL, SETTLE_TIME: change detection (watch.go)
}

// Meilisearch says where the search index lives.
type Meilisearch struct {
	Host           string // MEILISEARCH_HOST, an http(s) URL; "" = embedded backend
	APIKey         string // MEILISEARCH_API_KEY; secret, never logged
	IndexName      string // MEILISEARCH_INDEX_NAME; default files
	ChunkIndexName string // MEILISEARCH_CHUNK_INDEX_NAME; default file_chunks
}

// String describes the backend with the API key redacted.
func (m Meilisearch) String() string {
	if m.Host == "" {
		return "embedded(index=" + m.IndexName + ", chunks=" + m.ChunkIndexName + ")"
	}
	key := ""
	if m.APIKey != "" {
		key = ", api_key=" + redactedSecret
	}
	return "meilisearch(" + m.Host + ", index=" + m.IndexName + ", chunks=" + m.ChunkIndexName + key + ")"
}

// GoString keeps the API key out of %#v too.
func (m Meilisearch) GoString() string { return "config.Meilisearch(" + m.String() + ")" }

// Pipeline holds the dispatch, retry and chunking knobs.
type Pipeline struct {
	DispatchWindow int           // DISPATCH_WINDOW: jobs kept in Redis per module; default 256
	ReapInterval   time.Duration // REAP_INTERVAL: between reaper passes; default 1s
	RetryBase      time.Duration // RETRY_BASE: first retry delay; default 1s
	RetryMax       time.Duration // RETRY_MAX: longest retry delay, ≥ RetryBase; default 5m
	MaxAttempts    int           // MAX_ATTEMPTS before a job is parked in <m>:failed; default 5
	ChunkTokens    int           // CHUNK_TOKENS (alias TOKENS_PER_CHUNK); default 510
	ChunkOverlap   int           // CHUNK_OVERLAP, 0 ≤ x < ChunkTokens; default 50
	HashWorkers    int           // HASH_WORKERS (alias MAX_HASH_WORKERS); 0 = the scanner picks
	FailedMax      int           // FAILED_MAX: entries kept per <m>:failed list; default 10000
}

// ModuleNames returns the module names in pipeline order.
func (c *Config) ModuleNames() []string {
	names := make([]string, len(c.Modules))
	for i, m := range c.Modules {
		names[i] = m.Name
	}
	return names
}

// Error lists every configuration problem. main prints it and exits with code 2.
type Error struct {
	Problems []string
}

// Error returns the problems, one per line.
func (e *Error) Error() string { return strings.Join(e.Problems, "\n") }
