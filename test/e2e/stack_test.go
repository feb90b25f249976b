package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/homeindex/homeindex/internal/testutil/freeport"
	"github.com/homeindex/homeindex/internal/testutil/meilitest"
	"github.com/homeindex/homeindex/internal/testutil/redistest"
)

// module is one entry of MODULES.
type module struct {
	Name, UID string
	// Filterable lists filterable_attributes for the search index.
	Filterable []string
}

// stack is one deployment under test: a files tree with an archive directory, a metadata and
// a state directory, a redis-server, optionally Meilisearch, homeindexd and module processes.
type stack struct {
	t                                         *testing.T
	root                                      string
	Files, Archive, Meta, State, Logs, Record string
	Redis                                     *redistest.Server
	Meili                                     *meilitest.Server
	Modules                                   []module
	HTTPAddr                                  string
	Daemon                                    *proc
	stash                                     string // unplugged drives wait here
}

type stackOption func(*stack)

// withMeili makes the daemon use a real Meilisearch server instead of the embedded index.
func withMeili() stackOption {
	return func(s *stack) {
		s.Meili = meilitest.Start(s.t)
		s.Daemon.Env["MEILISEARCH_HOST"] = s.Meili.URL
		s.Daemon.Env["MEILISEARCH_API_KEY"] = s.Meili.MasterKey
	}
}

// withDaemonEnv sets daemon variables (pairs of name and value).
func withDaemonEnv(kv ...string) stackOption {
	return func(s *stack) {
		for i := 0; i+1 < len(kv); i += 2 {
			s.Daemon.Env[kv[i]] = kv[i+1]
		}
	}
}

// newStack prepares the directories, starts redis-server (append-only) and configures, but
// does not start, homeindexd. Pipeline timings are short so retries and reaps take
// milliseconds; every sync runs each second (CRON_EXPRESSION with seconds).
func newStack(t *testing.T, modules []module, opts ...stackOption) *stack {
	t.Helper()
	root := t.TempDir()
	s := &stack{t: t, root: root, Modules: modules,
		Files: filepath.Join(root, "files"), Meta: filepath.Join(root, "metadata"), State: filepath.Join(root, "state"),
		Logs: filepath.Join(root, "logs"), Record: filepath.Join(root, "records"), stash: filepath.Join(root, "unplugged")}
	s.Archive = filepath.Join(s.Files, "archive")
	for _, d := range []string{s.Files, s.Archive, s.Meta, s.State, s.Logs, s.Record, s.stash} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.Redis = redistest.Start(t, redistest.WithAppendOnly())
	s.HTTPAddr = freeAddr(t)
	s.Daemon = newProc(t, s.Logs, "homeindexd", bin.homeindexd, []string{"run"}, map[string]string{
		"INDEX_DIRECTORY":    s.Files,
		"METADATA_DIRECTORY": s.Meta,
		"STATE_DIRECTORY":    s.State,
		"REDIS_HOST":         "redis://" + s.Redis.Addr(),
		"MODULES":            modulesYAML(modules),
		"HTTP_ADDR":          s.HTTPAddr,
		"CRON_EXPRESSION":    "* * * * * *",
		"LOG_FORMAT":         "json",
		"LOGGING_LEVEL":      "debug",
		"DISPATCH_WINDOW":    "4",
		"REAP_INTERVAL":      "100ms",
		"RETRY_BASE":         "100ms",
		"RETRY_MAX":          "500ms",
		"MAX_ATTEMPTS":       "5",
		// Files written just before a sync are taken after 1 s rather than 5 s; the watch_*
		// tests run with the default.
		"SETTLE_TIME": "1s",
	})
	for _, o := range opts {
		o(s)
	}
	return s
}

// modulesYAML renders MODULES.
func modulesYAML(mods []module) string {
	var b strings.Builder
	for _, m := range mods {
		fmt.Fprintf(&b, "- name: %s\n  uid: %q\n", m.Name, m.UID)
		if len(m.Filterable) > 0 {
			fmt.Fprintf(&b, "  filterable_attributes: [%s]\n", strings.Join(m.Filterable, ", "))
		}
	}
	return b.String()
}

// setModules changes MODULES for the daemon's next start (and for modules started after).
func (s *stack) setModules(mods []module) {
	s.Modules = mods
	s.Daemon.Env["MODULES"] = modulesYAML(mods)
}

func (s *stack) uidOf(name string) string {
	for _, m := range s.Modules {
		if m.Name == name {
			return m.UID
		}
	}
	return ""
}

// newModule configures a module process named worker (its WORKER_ID, log and record file)
// serving module name with binary; kv pairs override the defaults, "" deletes a variable.
// It is not started.
func (s *stack) newModule(worker, binary, name string, kv ...string) *proc {
	s.t.Helper()
	env := map[string]string{
		"MODULE_NAME":        name,
		"MODULE_UID":         s.uidOf(name),
		"MODULES":            modulesYAML(s.Modules),
		"REDIS_HOST":         s.Redis.Addr(),
		"FILES_DIRECTORY":    s.Files,
		"METADATA_DIRECTORY": s.Meta,
		"TIMEOUT":            "10",
		"WORKER_ID":          worker,
		"RECORD_FILE":        filepath.Join(s.Record, worker+".jsonl"),
		"LOG_FORMAT":         "json",
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(env, kv[i])
			continue
		}
		env[kv[i]] = kv[i+1]
	}
	return newProc(s.t, s.Logs, worker, binary, nil, env)
}

// startModule is newModule then Start.
func (s *stack) startModule(worker, binary, name string, kv ...string) *proc {
	s.t.Helper()
	p := s.newModule(worker, binary, name, kv...)
	p.Start()
	return p
}

// records returns every check and run the module processes recorded so far.
func (s *stack) records() recordSet { return readRecords(s.t, s.Record) }

// write creates a file under the files root (parents included) and returns its document id.
func (s *stack) write(rel, content string) string {
	s.t.Helper()
	writeFile(s.t, filepath.Join(s.Files, filepath.FromSlash(rel)), content)
	return docID(content)
}

// docID is the document id of a content: xxh64, seed 0, 16 hex digits.
func docID(content string) string { return fmt.Sprintf("%016x", xxhash.Sum64String(content)) }

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// plug mounts a drive: its files are written elsewhere, then the directory appears in the
// archive directory in one rename (replacing an empty mount point). Returns rel path → id.
func (s *stack) plug(drive string, files map[string]string) map[string]string {
	s.t.Helper()
	staging := filepath.Join(s.root, "staging-"+drive)
	ids := map[string]string{}
	for rel, content := range files {
		writeFile(s.t, filepath.Join(staging, filepath.FromSlash(rel)), content)
		ids["archive/"+drive+"/"+rel] = docID(content)
	}
	s.mountAt(staging, drive)
	return ids
}

// unplug unmounts a drive: its directory's content moves out of the tree and an empty mount
// point stays behind.
func (s *stack) unplug(drive string) {
	s.t.Helper()
	if err := os.Rename(filepath.Join(s.Archive, drive), filepath.Join(s.stash, drive)); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(s.Archive, drive), 0o755); err != nil {
		s.t.Fatal(err)
	}
}

// replug mounts an unplugged drive again, with the same files.
func (s *stack) replug(drive string) {
	s.t.Helper()
	s.mountAt(filepath.Join(s.stash, drive), drive)
}

// renameDrive renames a drive's directory in place (the same disk under another mount name).
func (s *stack) renameDrive(from, to string) {
	s.t.Helper()
	if err := os.Rename(filepath.Join(s.Archive, from), filepath.Join(s.Archive, to)); err != nil {
		s.t.Fatal(err)
	}
}

func (s *stack) mountAt(src, drive string) {
	s.t.Helper()
	dst := filepath.Join(s.Archive, drive)
	if err := os.Remove(dst); err != nil && !os.IsNotExist(err) { // an empty mount point
		s.t.Fatal(err)
	}
	if err := os.Rename(src, dst); err != nil {
		s.t.Fatal(err)
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	a, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return a
}
