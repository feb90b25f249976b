package archtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// pkg is what the rules need of one `go list -deps -json` record.
type pkg struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Module     *struct{ Path string }
}

// graph is the module's packages (paths relative to Module) and their production imports
// (module packages relative too, others in full).
type graph map[string][]string

// listModule runs `go list -deps -json ./...` at the module root and keeps the module's packages.
func listModule(t *testing.T) (graph, []string) {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list packages: %v", err)
	}
	// -pgo=off: with cmd/homeindexd's profile, go list also reports each package that binary
	// compiles with it as a variant ("internal/app [.../cmd/homeindexd]"); the imports are the
	// same.
	cmd := exec.Command(gobin, "list", "-pgo=off", "-deps", "-json", Module+"/...")
	out, err := cmd.Output()
	openSources(t)
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	g := graph{}
	var all []string // every package the module's packages pull in, for the tool check
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		all = append(all, p.ImportPath)
		rel, ok := relative(p.ImportPath)
		if !ok {
			continue
		}
		var imps []string
		for _, imp := range p.Imports {
			if r, ok := relative(imp); ok {
				imp = r
			}
			imps = append(imps, imp)
		}
		g[rel] = imps
	}
	if len(g) < 20 {
		t.Fatalf("go list found %d packages of %s; expected the whole module", len(g), Module)
	}
	return g, all
}

// openSources opens every Go source and go.mod of the module. go list runs in another process,
// so the test cache would not see the files it read: opening them here records them, and a
// changed import anywhere reruns this test instead of reusing a cached pass.
func openSources(t *testing.T) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") || d.Name() == "go.mod" {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			return f.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("open the module's sources: %v", err)
	}
}

func relative(path string) (string, bool) {
	if path == Module {
		return ".", true
	}
	r, ok := strings.CutPrefix(path, Module+"/")
	return r, ok
}

// matches reports whether pattern (exact, or "x/..." for x and below) covers rel.
func matches(pattern, rel string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == base || strings.HasPrefix(rel, base+"/")
	}
	return rel == pattern
}

func matchesAny(patterns []string, rel string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(p, rel) })
}

// level returns the layer of rel by the longest matching pattern.
func level(layers []Layer, rel string) (int, bool) {
	best, lv := -1, 0
	for _, l := range layers {
		if matches(l.Pattern, rel) && len(l.Pattern) > best {
			best, lv = len(l.Pattern), l.Level
		}
	}
	return lv, best >= 0
}

// rules is the rule set check applies; the test uses the package's tables, the self-test its own.
type rules struct {
	layers                 []Layer
	redisClients           []string
	public, sharedInternal []string
	testOnly, testHelpers  []string
	allowed                map[string]string
}

func packageRules() rules {
	return rules{Layers, RedisClients, Public, SharedInternal, TestOnly, TestHelpers, Allowed}
}

// check returns every broken rule in g, and the allowed entries that did not occur.
func check(g graph, r rules) (problems, stale []string) {
	used := map[string]bool{}
	report := func(from, to, format string, args ...any) {
		key := from + " -> " + to
		if _, ok := r.allowed[key]; ok {
			used[key] = true
			return
		}
		problems = append(problems, key+": "+fmt.Sprintf(format, args...))
	}
	pkgs := make([]string, 0, len(g))
	for p := range g {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, from := range pkgs {
		fromLevel, placed := level(r.layers, from)
		if !placed {
			problems = append(problems, from+": not placed in any layer (add it to the Layers table)")
		}
		for _, to := range g[from] {
			if strings.HasPrefix(to, "github.com/redis/go-redis/") && !matchesAny(r.redisClients, from) {
				report(from, to, "only %v may import go-redis", r.redisClients)
			}
			if _, ours := g[to]; !ours {
				continue
			}
			if toLevel, ok := level(r.layers, to); placed && ok && toLevel > fromLevel {
				report(from, to, "layer %d imports layer %d (a lower layer must not import a higher one)", fromLevel, toLevel)
			}
			if matchesAny(r.testOnly, to) && !matchesAny(r.testHelpers, from) {
				report(from, to, "test-only package imported by production code")
			}
			if matchesAny(r.public, from) && strings.HasPrefix(to, "internal/") && !matchesAny(r.sharedInternal, to) {
				report(from, to, "a public package imports daemon internals")
			}
		}
	}
	for key := range r.allowed {
		if !used[key] {
			stale = append(stale, key)
		}
	}
	sort.Strings(stale)
	return problems, stale
}

// TestImportRules enforces the rules of layers.go over the module's production imports.
func TestImportRules(t *testing.T) {
	g, _ := listModule(t)
	problems, stale := check(g, packageRules())
	for _, p := range problems {
		t.Error(p)
	}
	for _, s := range stale {
		t.Errorf("Allowed lists %q, which no longer occurs: delete the entry", s)
	}
}

// TestNoToolsInBinaries checks that the tools pinned in go.mod (staticcheck) are not linked
// into anything the module builds.
func TestNoToolsInBinaries(t *testing.T) {
	_, all := listModule(t)
	for _, p := range all {
		if strings.HasPrefix(p, "honnef.co/go/tools") {
			t.Errorf("%s is in the module's dependency graph; tool dependencies must stay out of it", p)
		}
	}
}

// TestCheckCatchesViolations runs check over a made-up graph with one of each violation, so
// the rules above are known to be able to fail.
func TestCheckCatchesViolations(t *testing.T) {
	r := rules{
		layers: []Layer{
			{0, "low", ""}, {10, "mid", ""}, {20, "high", ""}, {20, "pub", ""}, {0, "internal/helpers/...", ""},
			{5, "internal/leaf", ""},
		},
		redisClients:   []string{"mid"},
		public:         []string{"pub"},
		sharedInternal: []string{"internal/leaf"},
		testOnly:       []string{"internal/helpers/..."},
		testHelpers:    []string{"internal/helpers/..."},
		allowed:        map[string]string{"low -> high": "tolerated", "gone -> away": "stale"},
	}
	g := graph{
		"low":                {"mid", "high"},                                // mid: violation; high: allowed
		"mid":                {"low", "github.com/redis/go-redis/v9"},        // fine
		"high":               {"mid", "github.com/redis/go-redis/v9", "fmt"}, // go-redis: violation
		"pub":                {"internal/leaf", "internal/helpers/x", "mid"}, // helpers: two violations
		"internal/leaf":      nil,                                            // fine
		"internal/helpers/x": {"low"},                                        // fine
		"unplaced":           {"low"},                                        // not placed
	}
	problems, stale := check(g, r)
	want := []string{
		"high -> github.com/redis/go-redis/v9",
		"low -> mid",
		"pub -> internal/helpers/x",
		"pub -> internal/helpers/x",
		"unplaced",
	}
	var got []string
	for _, p := range problems {
		head, _, _ := strings.Cut(p, ":")
		got = append(got, head)
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant the heads %q", strings.Join(problems, "\n"), want)
	}
	if !slices.Equal(stale, []string{"gone -> away"}) {
		t.Errorf("stale = %q, want [gone -> away]", stale)
	}
}

// TestLayersPlaceEachPatternOnce keeps the table readable: no pattern twice.
func TestLayersPlaceEachPatternOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, l := range Layers {
		if seen[l.Pattern] {
			t.Errorf("pattern %q appears twice in Layers", l.Pattern)
		}
		seen[l.Pattern] = true
		if l.Purpose == "" {
			t.Errorf("pattern %q has no purpose line", l.Pattern)
		}
	}
}
