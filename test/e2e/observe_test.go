package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/homeindex/homeindex/internal/search"
	"github.com/homeindex/homeindex/protocol"
)

// What a person (or a script) can observe of a stack: documents, markers, module output, the
// search index and the Redis queues.

// doc reads by-id/<id>/document.json.
func (s *stack) doc(id string) (protocol.Document, error) {
	var d protocol.Document
	b, err := os.ReadFile(filepath.Join(s.Meta, "by-id", id, "document.json"))
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("document.json of %s: %w", id, err)
	}
	return d, nil
}

// field returns a module field of a document as a string ("" when absent).
func field(d protocol.Document, name string) string {
	var v string
	if raw, ok := d.Fields[name]; ok && json.Unmarshal(raw, &v) == nil {
		return v
	}
	return ""
}

// docsDone returns nil once every id's document.json has cleared the chain (next "") and
// satisfies check (nil for none).
func (s *stack) docsDone(ids []string, check func(protocol.Document) error) func() error {
	return func() error {
		for _, id := range ids {
			d, err := s.doc(id)
			if err != nil {
				return err
			}
			if d.Next != "" {
				return fmt.Errorf("document %s (%v) still has next %q", id, d.PathsList, d.Next)
			}
			if check != nil {
				if err := check(d); err != nil {
					return fmt.Errorf("document %s (%v): %w", id, d.PathsList, err)
				}
			}
		}
		return nil
	}
}

// noted checks the example module's output is merged: note "hello".
func noted(d protocol.Document) error {
	if n := field(d, "note"); n != "hello" {
		return fmt.Errorf("note %q, want hello", n)
	}
	return nil
}

// moduleFile reads a file the module left in by-id/<id>/<module>/.
func (s *stack) moduleFile(id, module, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(s.Meta, "by-id", id, module, name))
}

// marker returns a drive's marker state: "ready", "pending", "" (none) or "both" (a bug),
// and the marker's content.
func (s *stack) marker(drive string) (state, content string) {
	ready, rerr := os.ReadFile(filepath.Join(s.Archive, drive+"-status-ready"))
	pending, perr := os.ReadFile(filepath.Join(s.Archive, drive+"-status-pending"))
	switch {
	case rerr == nil && perr == nil:
		return "both", ""
	case rerr == nil:
		return "ready", string(ready)
	case perr == nil:
		return "pending", string(pending)
	}
	return "", ""
}

// markerIs returns a condition for waitUntil.
func (s *stack) markerIs(drive, want string) func() error {
	return func() error {
		if got, _ := s.marker(drive); got != want {
			return fmt.Errorf("drive %s marker %q, want %q", drive, got, want)
		}
		return nil
	}
}

// markerStamp is a marker's state, content and modification time: a rewrite changes it.
func (s *stack) markerStamp(drive string) string {
	state, content := s.marker(drive)
	var mtime time.Time
	if st, err := os.Stat(filepath.Join(s.Archive, drive+"-status-"+state)); err == nil {
		mtime = st.ModTime()
	}
	return fmt.Sprintf("%s %q %s", state, content, mtime.Format(time.RFC3339Nano))
}

// byIDDirs lists the document directories in by-id.
func (s *stack) byIDDirs() []string {
	es, err := os.ReadDir(filepath.Join(s.Meta, "by-id"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// cli runs a homeindexd command with the daemon's environment.
func (s *stack) cli(args ...string) (stdout, stderr string, code int) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin.homeindexd, args...)
	cmd.Env = s.Daemon.environ()
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		s.t.Fatalf("homeindexd %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// searchCLI runs `homeindexd search --json` and returns the hits.
func (s *stack) searchCLI(filter, query string) ([]protocol.Document, error) {
	s.t.Helper()
	args := []string{"search", "--json", "--limit", "1000"}
	if filter != "" {
		args = append(args, "--filter", filter)
	}
	if query != "" {
		args = append(args, query)
	}
	return s.searchCLIArgs(args...)
}

// searchCLIArgs runs `homeindexd` with args (a search with --json) and returns the hits.
func (s *stack) searchCLIArgs(args ...string) ([]protocol.Document, error) {
	s.t.Helper()
	out, errOut, code := s.cli(args...)
	if code != 0 {
		return nil, fmt.Errorf("homeindexd %v: exit %d: %s", args, code, errOut)
	}
	var hits []protocol.Document
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var d protocol.Document
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("search hit %q: %w", sc.Text(), err)
		}
		hits = append(hits, d)
	}
	return hits, nil
}

// withIndex opens the search index the daemon writes (the embedded file or Meilisearch), as a
// separate reader would, and calls fn with it. The chunk index has no command line, hence this.
// A fresh open each time: an open embedded index does not see settings another process
// changes later.
func (s *stack) withIndex(fn func(search.Index) error) error {
	var idx search.Index
	var err error
	if s.Meili != nil {
		idx, err = search.OpenMeilisearch(context.Background(), search.MeiliConfig{Host: s.Meili.URL, APIKey: s.Meili.MasterKey,
			FilesIndex: "files", ChunksIndex: "file_chunks", Timeout: 30 * time.Second})
	} else {
		idx, err = search.OpenEmbedded(filepath.Join(s.State, "search.db"))
	}
	if err != nil {
		return fmt.Errorf("open search index: %w", err)
	}
	defer idx.Close()
	// As the daemon reads it: hits carry the document's paths object (search.WithFileDocuments).
	return fn(search.WithFileDocuments(idx, "archive"))
}

// chunkHits searches the chunk index for q among one document's chunks.
func chunkHits(idx search.Index, id, q string) ([]map[string]any, error) {
	res, err := idx.Chunks().Search(context.Background(), search.Query{Q: q, Filter: fmt.Sprintf("file_id = %q", id), Limit: 100})
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, h := range res.Hits {
		var m map[string]any
		if err := json.Unmarshal(h, &m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// queuedIDs returns the document ids of the items waiting or held in a module's lists
// (:check, :run and their :processing lists), which are bounded by the dispatch window.
func (s *stack) queuedIDs(module string) (map[string]string, error) {
	ctx := context.Background()
	out := map[string]string{}
	for _, key := range []string{protocol.CheckKey(module), protocol.RunKey(module),
		protocol.CheckProcessingKey(module), protocol.RunProcessingKey(module)} {
		items, err := s.Redis.Client().LRange(ctx, key, 0, -1).Result()
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			info, err := protocol.ParseItem(it)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			out[info.ID] = key
		}
	}
	return out, nil
}

// commandCalls reads Redis's INFO commandstats: calls per command, counting commands run
// inside scripts too.
func (s *stack) commandCalls() map[string]int64 {
	s.t.Helper()
	info, err := s.Redis.Client().Info(context.Background(), "commandstats").Result()
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				out[strings.TrimPrefix(name, "cmdstat_")] = n
			}
		}
	}
	return out
}
