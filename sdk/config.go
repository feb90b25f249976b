package sdk

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
	"github.com/rs/zerolog"
)

// Defaults for Config fields left zero (and for unset environment variables).
const (
	DefaultTimeout       = 30 * time.Second
	DefaultUIDRetry      = 600 * time.Second
	DefaultMetadataDir   = "/home-index/metadata"
	DefaultFilesDir      = "/files"
	DefaultRedisHost     = "redis"
	DefaultShutdownGrace = 5 * time.Second
)

// ErrMisconfigured is returned when MODULE_UID disagrees with this module's entry in MODULES,
// or MODULES has no entry for the module: the worker would skip every item. Main logs it as
// "fatal mis-configuration" and exits 1.
var ErrMisconfigured = errors.New("fatal mis-configuration")

// Config configures a Worker. LoadConfig fills it from the environment; tests build it directly.
type Config struct {
	// Module is the module name (MODULE_NAME, alias QUEUE_NAME): the prefix of its queue keys
	// and the name of its metadata subdirectory. Required.
	Module string
	// UID is this build's uid (MODULE_UID). Items carrying another uid are set aside.
	UID string
	// Modules is the MODULES list. When not nil, it must name Module with UID, or NewWorker
	// returns ErrMisconfigured. Nil skips the check.
	Modules []ModuleEntry
	// Redis is where Redis is (REDIS_HOST, default "redis") and, for rediss://, the PEM bundle
	// that verifies the server (REDIS_TLS_CA_FILE; "" uses the system roots).
	Redis redisconn.Endpoint
	// Timeout is how long a check or run may take (TIMEOUT). Zero means DefaultTimeout.
	Timeout time.Duration
	// WorkerID names this worker in resource-share rotations (WORKER_ID). "" means random.
	WorkerID string
	// Shares are the resource-share groups (RESOURCE_SHARES): a run starts only while this
	// worker holds every group's token.
	Shares []Share
	// ShareTTL is how long a share-list entry lives without being refreshed, so a crashed
	// holder's token frees itself. Zero means Timeout (as the upstream runtime does).
	ShareTTL time.Duration
	// MetadataDir is the metadata root (METADATA_DIRECTORY). "" means DefaultMetadataDir.
	MetadataDir string
	// FilesDir is the root that documents' paths are relative to (FILES_DIRECTORY). "" means
	// DefaultFilesDir.
	FilesDir string
	// UIDRetry is how long an item with another uid is set aside before it is offered again
	// (UID_RETRY_SECONDS). Zero means DefaultUIDRetry.
	UIDRetry time.Duration
	// ShutdownGrace is how long a stopping worker lets the current job finish before cancelling
	// it and handing its item back. Zero means DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// Log receives the worker's log lines as JSON (or whatever a zerolog.ConsoleWriter makes
	// of them). Nil means os.Stderr.
	Log io.Writer
	// LogLevel is the minimum level logged (LOGGING_LEVEL). The zero value is debug.
	LogLevel zerolog.Level
}

// ModuleEntry is one entry of MODULES, as far as a module cares.
type ModuleEntry struct {
	Name string
	UID  string
}

// Share is one RESOURCE_SHARES group.
type Share struct {
	Name string
	// Slice is how long a holder keeps the group's token while others wait (`seconds`).
	Slice time.Duration
}

// shareNameRE bounds group names: they become Redis key prefixes.
var shareNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// withDefaults returns c with defaults applied and validates it.
func (c Config) withDefaults() (Config, error) {
	var problems []string
	if !protocol.ValidModuleName(c.Module) {
		problems = append(problems, fmt.Sprintf("module name %q: want 1 to 64 characters from [a-z0-9_-]", c.Module))
	}
	if c.Redis.Addr == "" {
		problems = append(problems, "redis address is empty")
	}
	if c.Timeout < 0 || c.UIDRetry < 0 || c.ShareTTL < 0 || c.ShutdownGrace < 0 {
		problems = append(problems, "durations must not be negative")
	}
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.UIDRetry = cmp.Or(c.UIDRetry, DefaultUIDRetry)
	c.ShareTTL = cmp.Or(c.ShareTTL, c.Timeout)
	c.ShutdownGrace = cmp.Or(c.ShutdownGrace, DefaultShutdownGrace)
	c.MetadataDir = cmp.Or(c.MetadataDir, DefaultMetadataDir)
	c.FilesDir = cmp.Or(c.FilesDir, DefaultFilesDir)
	c.WorkerID = cmp.Or(c.WorkerID, newWorkerID())
	if c.Log == nil {
		c.Log = os.Stderr
	}
	seen := map[string]bool{}
	for i, s := range c.Shares {
		switch {
		case !shareNameRE.MatchString(s.Name):
			problems = append(problems, fmt.Sprintf("share %d: name %q: want 1 to 64 characters from [A-Za-z0-9_.-]", i, s.Name))
		case seen[s.Name]:
			problems = append(problems, fmt.Sprintf("share %d: name %q given twice", i, s.Name))
		case s.Slice <= 0:
			problems = append(problems, fmt.Sprintf("share %q: seconds must be > 0", s.Name))
		}
		seen[s.Name] = true
	}
	if len(problems) > 0 {
		return c, &ConfigError{Problems: problems}
	}
	if c.Modules != nil {
		if err := verifyUID(c.Module, c.UID, c.Modules); err != nil {
			return c, err
		}
	}
	return c, nil
}

// verifyUID is the startup check of upstream's _verify_module_uid, without its gaps: an
// unset MODULE_UID must match too.
func verifyUID(module, uid string, modules []ModuleEntry) error {
	for _, m := range modules {
		if m.Name == module {
			if m.UID != uid {
				return fmt.Errorf("%w: MODULE_UID %q differs from the uid %q that MODULES gives %s", ErrMisconfigured, uid, m.UID, module)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: MODULES has no module named %q", ErrMisconfigured, module)
}

// ConfigError lists every problem found in a configuration.
type ConfigError struct {
	Problems []string
}

// Error lists the problems on one line.
func (e *ConfigError) Error() string {
	return "invalid configuration: " + strings.Join(e.Problems, "; ")
}

// newWorkerID returns a random UUID (version 4), like upstream's str(uuid4()).
func newWorkerID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
