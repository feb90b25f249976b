package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/redisconn"
)

// envOf turns a map into a getenv function.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// mustLoad loads m and fails the test on any problem.
func mustLoad(t *testing.T, m map[string]string, opts ...Option) *Config {
	t.Helper()
	c, err := Load(envOf(m), opts...)
	if err != nil {
		t.Fatalf("Load(%v): unexpected error:\n%v", m, err)
	}
	return c
}

// problemsOf loads m and returns its problems, failing the test if there are none.
func problemsOf(t *testing.T, m map[string]string) []string {
	t.Helper()
	c, err := Load(envOf(m))
	if err == nil {
		t.Fatalf("Load(%v) = %v, want an error", m, c)
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Load error is %T, want *config.Error", err)
	}
	if c != nil {
		t.Errorf("Load returned a config with its error")
	}
	if got := err.Error(); got != strings.Join(ce.Problems, "\n") {
		t.Errorf("Error() = %q, want the problems one per line", got)
	}
	return ce.Problems
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, map[string]string{})
	if c.Schedule == nil {
		t.Fatal("Schedule is nil")
	}
	c.Schedule = nil
	want := &Config{
		IndexDirectory:    "/files",
		MetadataDirectory: "/home-index/metadata",
		StateDirectory:    "/home-index",
		ArchiveDirectory:  "/files/archive",
		indexVar:          "INDEX_DIRECTORY",
		ArchiveRel:        "archive",
		CronExpression:    "0 2 * * *",
		Meilisearch:       Meilisearch{IndexName: "files", ChunkIndexName: "file_chunks"},
		HTTPAddr:          "127.0.0.1:8080",
		LogLevel:          "info",
		LogFormat:         "json",
		Redis:             redisconn.Endpoint{Addr: "redis:6379"},
		Pipeline: Pipeline{
			DispatchWindow: 256,
			ReapInterval:   time.Second,
			RetryBase:      time.Second,
			RetryMax:       5 * time.Minute,
			MaxAttempts:    5,
			ChunkTokens:    510,
			ChunkOverlap:   50,
			HashWorkers:    0,
			FailedMax:      10000,
		},
		Missing: Missing{Retention: 30 * 24 * time.Hour, HoldShare: 0.2, HoldMin: 100},
		Watch:   Watch{Percent: 50, Rewalk: 30 * time.Second, Settle: 5 * time.Second},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults:\n got %#v\nwant %#v", c, want)
	}
	if got := c.ModuleNames(); len(got) != 0 {
		t.Errorf("ModuleNames() = %v, want none", got)
	}
}

func TestLoadGoodValues(t *testing.T) {
	t.Parallel()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, []byte("pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("fedcba9876543210\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		env   map[string]string
		opts  []Option
		check func(*Config) (got, want any)
	}{
		{"index cleaned", map[string]string{"INDEX_DIRECTORY": "/data//files/"},
			nil, func(c *Config) (any, any) {
				return [2]string{c.IndexDirectory, c.ArchiveDirectory}, [2]string{"/data/files", "/data/files/archive"}
			}},
		{"alias FILES_DIRECTORY", map[string]string{"FILES_DIRECTORY": "/srv"},
			nil, func(c *Config) (any, any) {
				return [2]string{c.IndexDirectory, c.ArchiveDirectory}, [2]string{"/srv", "/srv/archive"}
			}},
		{"alias equal to INDEX_DIRECTORY", map[string]string{"INDEX_DIRECTORY": "/srv", "FILES_DIRECTORY": "/srv/"},
			nil, func(c *Config) (any, any) { return c.IndexDirectory, "/srv" }},
		{"archive nested", map[string]string{"ARCHIVE_DIRECTORY": "/files/media/drives/"},
			nil, func(c *Config) (any, any) {
				return [2]string{c.ArchiveDirectory, c.ArchiveRel}, [2]string{"/files/media/drives", "media/drives"}
			}},
		{"metadata inside index", map[string]string{"METADATA_DIRECTORY": "/files/.meta"},
			nil, func(c *Config) (any, any) { return c.MetadataRel, ".meta" }},
		{"state inside index", map[string]string{"STATE_DIRECTORY": "/files/.state/x"},
			nil, func(c *Config) (any, any) { return c.StateRel, ".state/x" }},
		{"cron 6 fields", map[string]string{"CRON_EXPRESSION": "*/2 * * * * *"},
			nil, func(c *Config) (any, any) { return c.CronExpression, "*/2 * * * * *" }},
		{"cron descriptor", map[string]string{"CRON_EXPRESSION": "@hourly"},
			nil, func(c *Config) (any, any) { return c.Schedule != nil, true }},
		{"meilisearch", map[string]string{"MEILISEARCH_HOST": "http://meili:7700/", "MEILISEARCH_API_KEY": " key ",
			"MEILISEARCH_INDEX_NAME": "Docs-1", "MEILISEARCH_CHUNK_INDEX_NAME": "docs_chunks"},
			nil, func(c *Config) (any, any) {
				return c.Meilisearch, Meilisearch{Host: "http://meili:7700", APIKey: " key ", IndexName: "Docs-1", ChunkIndexName: "docs_chunks"}
			}},
		{"meilisearch https", map[string]string{"MEILISEARCH_HOST": "https://search.example.com"},
			nil, func(c *Config) (any, any) { return c.Meilisearch.Host, "https://search.example.com" }},
		{"http all interfaces with a token", map[string]string{"HTTP_ADDR": ":9000", "HTTP_TOKEN": "0123456789abcdef"},
			nil, func(c *Config) (any, any) { return c.HTTPAddr + " " + c.HTTPToken, ":9000 0123456789abcdef" }},
		{"http token file", map[string]string{"HTTP_ADDR": "0.0.0.0:9000", "HTTP_TOKEN_FILE": tokenFile},
			nil, func(c *Config) (any, any) { return c.HTTPToken, "fedcba9876543210" }},
		{"http insecure opt-in", map[string]string{"HTTP_ADDR": "192.0.2.1:9000", "HTTP_INSECURE_NO_AUTH": "true"},
			nil, func(c *Config) (any, any) { return c.HTTPInsecureNoAuth, true }},
		{"http localhost needs no token", map[string]string{"HTTP_ADDR": "localhost:9000"},
			nil, func(c *Config) (any, any) { return c.HTTPToken, "" }},
		{"http ipv6", map[string]string{"HTTP_ADDR": "[::1]:0"},
			nil, func(c *Config) (any, any) { return c.HTTPAddr, "[::1]:0" }},
		{"http off", map[string]string{"HTTP_ADDR": "OFF"},
			nil, func(c *Config) (any, any) { return c.HTTPAddr, "" }},
		{"level debug", map[string]string{"LOGGING_LEVEL": "DEBUG"},
			nil, func(c *Config) (any, any) { return c.LogLevel, "debug" }},
		{"level warning", map[string]string{"LOGGING_LEVEL": "Warning"},
			nil, func(c *Config) (any, any) { return c.LogLevel, "warn" }},
		{"level error", map[string]string{"LOGGING_LEVEL": "error\n"},
			nil, func(c *Config) (any, any) { return c.LogLevel, "error" }},
		{"format default on a terminal", map[string]string{},
			[]Option{WithTTY(true)}, func(c *Config) (any, any) { return c.LogFormat, "console" }},
		{"format default off a terminal", map[string]string{},
			[]Option{WithTTY(false)}, func(c *Config) (any, any) { return c.LogFormat, "json" }},
		{"format json on a terminal", map[string]string{"LOG_FORMAT": "JSON"},
			[]Option{WithTTY(true)}, func(c *Config) (any, any) { return c.LogFormat, "json" }},
		{"format console", map[string]string{"LOG_FORMAT": "console"},
			nil, func(c *Config) (any, any) { return c.LogFormat, "console" }},
		{"modules", map[string]string{"MODULES": "- name: ocr\n  uid: a1\n- name: caption\n  uid: 7\n"},
			nil, func(c *Config) (any, any) { return c.ModuleNames(), []string{"ocr", "caption"} }},
		{"redis url", map[string]string{"REDIS_HOST": "rediss://u:p@cache:6380/2", "REDIS_TLS_CA_FILE": caFile},
			nil, func(c *Config) (any, any) {
				return c.Redis, redisconn.Endpoint{Addr: "cache:6380", Username: "u", Password: "p", DB: 2, TLS: true, CAFile: caFile}
			}},
		{"pipeline", map[string]string{"DISPATCH_WINDOW": "1", "REAP_INTERVAL": "250ms", "RETRY_BASE": "0.5",
			"RETRY_MAX": "1.5", "MAX_ATTEMPTS": "1", "CHUNK_TOKENS": "100", "CHUNK_OVERLAP": "0",
			"HASH_WORKERS": "3", "FAILED_MAX": "1"},
			nil, func(c *Config) (any, any) {
				return c.Pipeline, Pipeline{DispatchWindow: 1, ReapInterval: 250 * time.Millisecond,
					RetryBase: 500 * time.Millisecond, RetryMax: 1500 * time.Millisecond, MaxAttempts: 1,
					ChunkTokens: 100, ChunkOverlap: 0, HashWorkers: 3, FailedMax: 1}
			}},
		{"retry max equals base", map[string]string{"RETRY_BASE": "30s", "RETRY_MAX": "30"},
			nil, func(c *Config) (any, any) { return c.Pipeline.RetryMax, 30 * time.Second }},
		{"upstream chunk and hash names", map[string]string{"TOKENS_PER_CHUNK": "60", "CHUNK_OVERLAP": "59", "MAX_HASH_WORKERS": "2"},
			nil, func(c *Config) (any, any) {
				return [3]int{c.Pipeline.ChunkTokens, c.Pipeline.ChunkOverlap, c.Pipeline.HashWorkers}, [3]int{60, 59, 2}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, want := tt.check(mustLoad(t, tt.env, tt.opts...))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %#v, want %#v", got, want)
			}
		})
	}
}

func TestLoadBadValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, []byte("pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("fedcba9876543210\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		want string // the one problem expected
	}{
		{"index relative", map[string]string{"INDEX_DIRECTORY": "files"}, `INDEX_DIRECTORY "files": must be an absolute path`},
		{"alias relative", map[string]string{"FILES_DIRECTORY": "files"}, `FILES_DIRECTORY "files": must be an absolute path`},
		{"alias conflicts", map[string]string{"INDEX_DIRECTORY": "/a", "FILES_DIRECTORY": "/b"}, `INDEX_DIRECTORY "/a": conflicts with FILES_DIRECTORY "/b"`},
		{"metadata relative", map[string]string{"METADATA_DIRECTORY": "meta"}, `METADATA_DIRECTORY "meta": must be an absolute path`},
		{"metadata is index", map[string]string{"METADATA_DIRECTORY": "/files/"}, `METADATA_DIRECTORY "/files": must not be INDEX_DIRECTORY itself`},
		{"metadata in archive", map[string]string{"METADATA_DIRECTORY": "/files/archive/meta"}, `METADATA_DIRECTORY "/files/archive/meta": must not be inside ARCHIVE_DIRECTORY "/files/archive"`},
		{"state relative", map[string]string{"STATE_DIRECTORY": "./state"}, `STATE_DIRECTORY "./state": must be an absolute path`},
		{"state is index", map[string]string{"STATE_DIRECTORY": "/files"}, `STATE_DIRECTORY "/files": must not be INDEX_DIRECTORY itself`},
		{"archive relative", map[string]string{"ARCHIVE_DIRECTORY": "archive"}, `ARCHIVE_DIRECTORY "archive": must be an absolute path`},
		{"archive outside", map[string]string{"ARCHIVE_DIRECTORY": "/mnt/archive"}, `ARCHIVE_DIRECTORY "/mnt/archive": must be a directory inside INDEX_DIRECTORY "/files"`},
		{"archive sibling prefix", map[string]string{"ARCHIVE_DIRECTORY": "/files2/archive"}, `ARCHIVE_DIRECTORY "/files2/archive": must be a directory inside`},
		{"archive is index", map[string]string{"ARCHIVE_DIRECTORY": "/files"}, `ARCHIVE_DIRECTORY "/files": must be a directory inside INDEX_DIRECTORY "/files"`},
		{"archive outside alias", map[string]string{"FILES_DIRECTORY": "/srv", "ARCHIVE_DIRECTORY": "/files/archive"}, `must be a directory inside FILES_DIRECTORY "/srv"`},
		{"cron", map[string]string{"CRON_EXPRESSION": "bad cron"}, `CRON_EXPRESSION "bad cron": invalid cron expression: expected`},
		{"cron range", map[string]string{"CRON_EXPRESSION": "61 * * * *"}, `CRON_EXPRESSION "61 * * * *": invalid cron expression: end of range (61) above maximum (59)`},
		{"cron 7 fields", map[string]string{"CRON_EXPRESSION": "0 0 0 * * * *"}, `invalid cron expression`},
		{"cron day 8", map[string]string{"CRON_EXPRESSION": "0 0 * * 8"}, `invalid cron expression`},
		{"cron bare time zone", map[string]string{"CRON_EXPRESSION": "TZ=UTC"}, `CRON_EXPRESSION "TZ=UTC": invalid cron expression: no schedule after TZ=UTC`},
		{"cron bad time zone", map[string]string{"CRON_EXPRESSION": "TZ=Nowhere/Land 0 2 * * *"}, `invalid cron expression: provided bad location`},
		{"meili scheme", map[string]string{"MEILISEARCH_HOST": "meili:7700"}, `MEILISEARCH_HOST "meili:7700": must be an http:// or https:// URL with a host`},
		{"meili no host", map[string]string{"MEILISEARCH_HOST": "http://"}, `MEILISEARCH_HOST "http://": must be an http:// or https:// URL`},
		{"meili junk", map[string]string{"MEILISEARCH_HOST": "http://a b"}, `MEILISEARCH_HOST "http://a b": must be`},
		{"meili query", map[string]string{"MEILISEARCH_HOST": "http://m:7700/?k=1"}, `MEILISEARCH_HOST "http://m:7700/?k=1": must not carry`},
		{"index name", map[string]string{"MEILISEARCH_INDEX_NAME": "my files"}, `MEILISEARCH_INDEX_NAME "my files": must match`},
		{"chunk index name", map[string]string{"MEILISEARCH_CHUNK_INDEX_NAME": "a/b"}, `MEILISEARCH_CHUNK_INDEX_NAME "a/b": must match`},
		{"same index names", map[string]string{"MEILISEARCH_CHUNK_INDEX_NAME": "files"}, `MEILISEARCH_CHUNK_INDEX_NAME "files": must differ from MEILISEARCH_INDEX_NAME`},
		{"http no port", map[string]string{"HTTP_ADDR": "localhost"}, `HTTP_ADDR "localhost": must be host:port`},
		{"http bad port", map[string]string{"HTTP_ADDR": "localhost:http"}, `HTTP_ADDR "localhost:http": port must be a number`},
		{"http port range", map[string]string{"HTTP_ADDR": ":70000"}, `HTTP_ADDR ":70000": port must be a number`},
		{"http open without token", map[string]string{"HTTP_ADDR": ":9000"}, `HTTP_ADDR ":9000": is reachable from other machines: set HTTP_TOKEN`},
		{"http named host without token", map[string]string{"HTTP_ADDR": "nas.lan:9000"}, `HTTP_ADDR "nas.lan:9000": is reachable from other machines`},
		{"http short token", map[string]string{"HTTP_TOKEN": "short"}, `HTTP_TOKEN: must be at least 16 characters`},
		{"http token spaces", map[string]string{"HTTP_TOKEN": "0123456789 abcdef"}, `HTTP_TOKEN: must be printable ASCII`},
		{"http token and file", map[string]string{"HTTP_TOKEN": "0123456789abcdef", "HTTP_TOKEN_FILE": tokenFile}, `HTTP_TOKEN: set only one of HTTP_TOKEN and HTTP_TOKEN_FILE`},
		{"http token file missing", map[string]string{"HTTP_TOKEN_FILE": filepath.Join(dir, "none")}, `HTTP_TOKEN_FILE "` + filepath.Join(dir, "none") + `": cannot be read: no such file`},
		{"http insecure value", map[string]string{"HTTP_INSECURE_NO_AUTH": "maybe"}, `HTTP_INSECURE_NO_AUTH "maybe": must be true or false`},
		{"level", map[string]string{"LOGGING_LEVEL": "verbose"}, `LOGGING_LEVEL "verbose": must be debug, info, warn or error`},
		{"format", map[string]string{"LOG_FORMAT": "text"}, `LOG_FORMAT "text": must be json or console`},
		{"modules yaml", map[string]string{"MODULES": "- name: [unclosed"}, `MODULES: invalid YAML: `},
		{"modules name", map[string]string{"MODULES": "- name: a/b"}, `MODULES[0].name "a/b": must match`},
		{"redis port", map[string]string{"REDIS_HOST": "redis:0"}, `REDIS_HOST "redis:0": port "0" must be a number from 1 to 65535`},
		{"redis scheme", map[string]string{"REDIS_HOST": "unix:///tmp/redis.sock"}, `REDIS_HOST "unix:///tmp/redis.sock": unsupported scheme "unix"`},
		{"redis ca missing", map[string]string{"REDIS_HOST": "rediss://r", "REDIS_TLS_CA_FILE": filepath.Join(dir, "none.pem")}, `REDIS_TLS_CA_FILE "` + filepath.Join(dir, "none.pem") + `": cannot be read: no such file or directory`},
		{"redis ca directory", map[string]string{"REDIS_HOST": "rediss://r", "REDIS_TLS_CA_FILE": dir}, `REDIS_TLS_CA_FILE "` + dir + `": is a directory`},
		{"redis ca without tls", map[string]string{"REDIS_HOST": "redis://r", "REDIS_TLS_CA_FILE": caFile}, `REDIS_TLS_CA_FILE "` + caFile + `": is set but REDIS_HOST does not use rediss://`},
		{"dispatch window zero", map[string]string{"DISPATCH_WINDOW": "0"}, `DISPATCH_WINDOW "0": must be at least 1`},
		{"dispatch window text", map[string]string{"DISPATCH_WINDOW": "many"}, `DISPATCH_WINDOW "many": must be an integer`},
		{"reap interval zero", map[string]string{"REAP_INTERVAL": "0s"}, `REAP_INTERVAL "0s": must be greater than zero`},
		{"reap interval text", map[string]string{"REAP_INTERVAL": "soon"}, `REAP_INTERVAL "soon": must be a duration such as 1.5s or 5m, or a number of seconds`},
		{"retry base negative", map[string]string{"RETRY_BASE": "-1"}, `RETRY_BASE "-1": must be greater than zero`},
		{"retry base nan", map[string]string{"RETRY_BASE": "NaN"}, `RETRY_BASE "NaN": out of range`},
		{"retry max huge", map[string]string{"RETRY_MAX": "1e300"}, `RETRY_MAX "1e300": out of range`},
		{"retry max below base", map[string]string{"RETRY_BASE": "10m"}, `RETRY_MAX "5m0s": must be at least RETRY_BASE (10m0s)`},
		{"max attempts", map[string]string{"MAX_ATTEMPTS": "0"}, `MAX_ATTEMPTS "0": must be at least 1`},
		{"chunk tokens", map[string]string{"CHUNK_TOKENS": "0"}, `CHUNK_TOKENS "0": must be at least 1`},
		{"chunk tokens alias", map[string]string{"TOKENS_PER_CHUNK": "x"}, `TOKENS_PER_CHUNK "x": must be an integer`},
		{"chunk tokens conflict", map[string]string{"CHUNK_TOKENS": "100", "TOKENS_PER_CHUNK": "200"}, `CHUNK_TOKENS "100": conflicts with TOKENS_PER_CHUNK "200"`},
		{"chunk overlap negative", map[string]string{"CHUNK_OVERLAP": "-1"}, `CHUNK_OVERLAP "-1": must be at least 0`},
		{"chunk overlap too big", map[string]string{"CHUNK_TOKENS": "50"}, `CHUNK_OVERLAP "50": must be less than CHUNK_TOKENS (50)`},
		{"hash workers", map[string]string{"HASH_WORKERS": "-2"}, `HASH_WORKERS "-2": must be at least 0`},
		{"failed max", map[string]string{"FAILED_MAX": "0"}, `FAILED_MAX "0": must be at least 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			problems := problemsOf(t, tt.env)
			if len(problems) != 1 || !strings.Contains(problems[0], tt.want) {
				t.Errorf("problems:\n%s\nwant exactly one containing %q", strings.Join(problems, "\n"), tt.want)
			}
		})
	}
}

func TestLoadListsAllProblems(t *testing.T) {
	t.Parallel()
	problems := problemsOf(t, map[string]string{
		"INDEX_DIRECTORY": "relative",
		"CRON_EXPRESSION": "bad cron",
		"HTTP_ADDR":       "nope",
		"LOGGING_LEVEL":   "loud",
		"MODULES":         "- name: Bad\n- name: ok\n  colour: red\n",
		"REDIS_HOST":      "redis://user:s3cret@host:99999",
		"MAX_ATTEMPTS":    "0",
		"RETRY_MAX":       "x",
	})
	want := []string{
		`INDEX_DIRECTORY "relative"`,
		`CRON_EXPRESSION "bad cron": invalid cron expression`,
		`HTTP_ADDR "nope"`,
		`LOGGING_LEVEL "loud"`,
		`MODULES[0].name "Bad"`,
		`MODULES[1]: unknown field "colour"`,
		`REDIS_HOST "redis://user:xxxxx@host:99999": port must be a number`,
		`RETRY_MAX "x"`,
		`MAX_ATTEMPTS "0"`,
	}
	if len(problems) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(problems), len(want), strings.Join(problems, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(problems[i], w) {
			t.Errorf("problem %d = %q, want it to contain %q", i, problems[i], w)
		}
	}
	if all := strings.Join(problems, "\n"); strings.Contains(all, "s3cret") {
		t.Errorf("the Redis password leaked into the problems:\n%s", all)
	}
}

func TestConfigStringRedactsSecrets(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, map[string]string{
		"REDIS_HOST":          "redis://admin:hunter2@cache:6379/1",
		"MEILISEARCH_HOST":    "http://meili:7700",
		"MEILISEARCH_API_KEY": "masterkey",
		"MODULES":             "- name: ocr\n- name: caption\n",
		"CRON_EXPRESSION":     "*/5 * * * *",
	})
	s := c.String()
	for _, want := range []string{
		"INDEX_DIRECTORY=/files", `CRON_EXPRESSION="*/5 * * * *"`, "MEILISEARCH_API_KEY=xxxxx",
		"MODULES=ocr,caption", "REDIS_HOST=redis://admin:xxxxx@cache:6379/1", "RETRY_MAX=5m0s",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %q, want it to contain %q", s, want)
		}
	}
	// Every fmt verb, on the config and its parts, keeps the secrets out.
	for _, out := range []string{s, fmtAll(c), fmtAll(*c), fmtAll(c.Redis), fmtAll(c.Meilisearch)} {
		if strings.Contains(out, "hunter2") || strings.Contains(out, "masterkey") {
			t.Errorf("a secret leaked: %s", out)
		}
	}
}

// fmtAll formats v with every verb a log line might use.
func fmtAll(v any) string {
	return fmt.Sprintf("%v|%+v|%#v|%s", v, v, v, v)
}
