// Package archtest holds the import rules of this module and the test that enforces them
// (archtest_test.go, run by `go test ./...` and so by `make test`).
//
// The rules, all over production imports (a package's .go files, not its tests):
//
//   - Layers. Every package of the module is placed in exactly one layer of the Layers table.
//     A package may import packages of its own layer or of lower layers, never of a higher
//     one, so the tree has one arrow direction. A package the table does not place fails the
//     test: a new package is placed here when it is created.
//   - Redis. Only the packages in RedisClients import github.com/redis/go-redis: the daemon's
//     Redis package (internal/queue), the public connection helper (redisconn), the public
//     worker SDK and their test helpers. Everything else reaches Redis through them. Tests may
//     import go-redis to look at Redis directly.
//   - Test helpers. The TestOnly packages are imported by tests and by the TestHelpers only.
//   - Public side. The packages module authors import (Public) never import daemon internals,
//     except the few leaves listed in SharedInternal.
//
// Known violations are listed in Allowed, each with its reason; the list should be empty.
package archtest

// Module is this module's path.
const Module = "github.com/homeindex/homeindex"

// Layer places packages: Pattern is a package path relative to Module, either exact or ending
// in "/..." for the package and everything below it. The longest matching pattern wins.
type Layer struct {
	Level   int
	Pattern string
	Purpose string // one line: what lives there
}

// Layers is the layer table, lowest first. Level numbers leave gaps for new layers.
var Layers = []Layer{
	// 0: leaves. Import nothing of ours.
	{0, "internal/yamlnode", "strict YAML decoding shared by config, protocol and sdk"},
	{0, "internal/durable", "crash-safe file writes (fsync, rename)"},
	{0, "internal/chunk", "text chunking for the index"},
	{0, "internal/sqlitedb", "opening SQLite databases with the project's pragmas"},
	{0, "internal/logging", "zerolog setup"},
	{0, "internal/gcfloor", "garbage collector pacing for a small live heap"},
	{0, "internal/jsonvalid", "JSON validity and string literals as encoding/json reads them, faster"},
	{0, "internal/supervise", "supervisor helper: run components together, stop them in order"},
	{0, "redisconn", "public Redis connection helper: endpoint, URL, TLS, masking, refusal hints"},
	{0, "internal/testutil/...", "test helpers (real redis-server, Meilisearch, fixtures); see TestOnly"},

	// 10: the wire contract between daemon and modules.
	{10, "protocol", "keys, messages, names and formats shared by daemon and modules"},

	// 20: stores and adapters, each owning one resource.
	{20, "internal/queue", "the daemon's only Redis package: keys, Lua scripts, job states"},
	{20, "internal/catalog", "the SQLite catalog of files, jobs and drives"},
	{20, "internal/search", "search index (Meilisearch) and the names table"},
	{20, "internal/metadata", "per-file metadata directories on disk"},
	{20, "internal/state", "daemon state files"},
	{20, "internal/drives", "drive discovery and markers"},
	{20, "internal/scanner", "directory walking and file hashing"},
	{20, "internal/watch", "filesystem change notification"},

	// 30: components, each doing one step of the pipeline over the stores.
	{30, "internal/filesync", "drive sync: catalog follows the files"},
	{30, "internal/outbox", "catalog to search index propagation"},
	{30, "internal/merge", "module results merged into the catalog"},
	{30, "internal/reaper", "expired leases handed back"},
	{30, "internal/scheduler", "when syncs happen"},
	{30, "internal/dispatch", "pushing jobs to Redis, with pauses"},

	// 35: configuration from the environment. Above the components so that it can name their
	// defaults (reaper.DefaultInterval, queue.DefaultRetryBase) instead of repeating them.
	{35, "internal/config", "environment configuration: parse, default, validate"},

	// 40: the pipeline: leader lock, epoch, supervision of the components.
	{40, "internal/pipeline", "leader lock, epoch check, MODULES changes, supervision"},

	// 50: operations over the running pipeline, then the HTTP face of them.
	{50, "internal/ops", "operator actions (sync now, verify, reconcile) over small interfaces"},
	{60, "internal/httpapi", "HTTP API, UI and metrics"},

	// 70: assembly.
	{70, "internal/app", "assembles the components from the configuration"},

	// 80: public SDK side. sdk may import the protocol and redisconn below it.
	{80, "sdk", "public worker SDK for modules"},
	{80, "sdk/moduletest", "test harness for module authors"},
	{85, "modules/...", "the bundled modules' handlers"},

	// 90: binaries and test-only packages.
	{90, "cmd/...", "binaries"},
	{90, "internal/archtest", "these rules"},
	{90, "test/...", "end-to-end suites over the built binaries"},
	{90, "scripts/...", "bench tooling (the sync floor); never in the shipped binaries"},
}

// RedisClients may import github.com/redis/go-redis (patterns as in Layers).
var RedisClients = []string{
	"internal/queue",
	"redisconn",
	"sdk",
	"sdk/moduletest",
	"internal/testutil/redistest",
}

// Public are the packages module authors build on; they stay free of daemon internals.
var Public = []string{"protocol", "redisconn", "sdk/...", "modules/..."}

// SharedInternal are the internal packages Public may import: leaves with no daemon logic.
var SharedInternal = []string{"internal/yamlnode", "internal/jsonvalid", "internal/testutil/redistest"}

// TestOnly are packages for tests; production code never imports them.
var TestOnly = []string{"internal/testutil/..."}

// TestHelpers are the production packages that exist for tests and so may import TestOnly.
var TestHelpers = []string{"internal/testutil/...", "sdk/moduletest", "test/..."}

// Allowed lists known violations, "importer -> imported" (paths relative to Module), each with
// why it is tolerated for now. Entries that no longer occur fail the test, so the list shrinks.
var Allowed = map[string]string{}
