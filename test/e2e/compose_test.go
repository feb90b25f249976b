package e2e

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/sdk"
)

// composeFile is the part of deploy/compose.yaml the test reads.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Build       struct {
			Dockerfile string            `yaml:"dockerfile"`
			Args       map[string]string `yaml:"args"`
		} `yaml:"build"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
}

// Every variable deploy/compose.yaml and the Dockerfiles set for homeindexd or a module is one
// that binary reads (a misspelt name would be silently ignored), the values pass the binaries'
// own validation (the module's uid agrees with MODULES), and the deployment keeps its promises:
// Redis persists (appendonly), Meilisearch is pinned, homeindexd has a healthcheck that runs
// `homeindexd healthcheck`, and the named volumes are writable by the images' non-root user.
func TestComposeSetsOnlyVariablesTheBinariesRead(t *testing.T) {
	t.Parallel()
	daemonVars := stringConsts(t, filepath.Join(repoRoot, "internal", "config"), "env")
	moduleVars := stringConsts(t, filepath.Join(repoRoot, "sdk"), "Env")
	// Variables both read (MODULES) are named once, in protocol.
	for name := range stringConsts(t, filepath.Join(repoRoot, "protocol"), "Env") {
		daemonVars[name], moduleVars[name] = true, true
	}
	// First-party modules read their own variables too (Env* constants in modules/<name>).
	moduleDirs, _ := filepath.Glob(filepath.Join(repoRoot, "modules", "*"))
	for _, dir := range moduleDirs {
		for name := range stringConsts(t, dir, "Env") {
			moduleVars[name] = true
		}
	}
	if !daemonVars["INDEX_DIRECTORY"] || !daemonVars["MODULES"] || !moduleVars["MODULE_UID"] || !moduleVars["RESOURCE_SHARES"] {
		t.Fatalf("variable lists not found in the sources: daemon %v, module %v", daemonVars, moduleVars)
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	read := map[string]map[string]bool{"deploy/Dockerfile": daemonVars, "deploy/Dockerfile.module": moduleVars}
	checked := map[string]bool{}
	for name, svc := range c.Services {
		vars, ours := read[svc.Build.Dockerfile]
		if !ours {
			continue // redis, meilisearch: not our binaries
		}
		checked[svc.Build.Dockerfile] = true
		env := map[string]string{}
		for k, v := range svc.Environment {
			if !vars[k] {
				t.Errorf("service %s sets %s, which %s's binary never reads", name, k, svc.Build.Dockerfile)
			}
			env[k] = interpolate(v)
		}
		for k, v := range dockerfileEnv(t, svc.Build.Dockerfile) {
			if !vars[k] {
				t.Errorf("%s sets ENV %s, which its binary never reads", svc.Build.Dockerfile, k)
			}
			if _, set := env[k]; !set {
				env[k] = v
			}
		}
		getenv := func(k string) string { return env[k] }
		// A fresh named volume takes its owner from the image's directory: it must be the
		// unprivileged user's, or the binary cannot write there.
		for _, v := range svc.Volumes {
			src, dst, _ := strings.Cut(v, ":")
			dst, _, _ = strings.Cut(dst, ":")
			if !strings.ContainsAny(src[:1], "./~$") && !dockerfileHas(t, svc.Build.Dockerfile, `^COPY .*--chown=65532:65532 .* `+regexp.QuoteMeta(dst)+`$`) {
				t.Errorf("service %s mounts volume %s at %s, which %s does not create owned by 65532", name, src, dst, svc.Build.Dockerfile)
			}
		}
		switch svc.Build.Dockerfile {
		case "deploy/Dockerfile":
			cfg, err := config.Load(getenv)
			if err != nil {
				t.Errorf("service %s: homeindexd rejects its environment: %v", name, err)
				continue
			}
			if cfg.Meilisearch.Host != "http://meilisearch:7700" || cfg.Redis.Addr != "redis:6379" {
				t.Errorf("service %s: Meilisearch %q, Redis %q: want the compose services", name, cfg.Meilisearch.Host, cfg.Redis.Addr)
			}
			if !slices.Contains(svc.Healthcheck.Test, "healthcheck") && !dockerfileHas(t, svc.Build.Dockerfile, `HEALTHCHECK .*"healthcheck"`) {
				t.Errorf("service %s has no healthcheck running `homeindexd healthcheck`", name)
			}
		case "deploy/Dockerfile.module":
			cfg, err := sdk.LoadConfig(getenv)
			if err == nil {
				_, err = sdk.NewWorker(cfg, sdk.HandlerFuncs{RunFunc: func(context.Context, *sdk.Job) (sdk.Result, error) { return sdk.Result{}, nil }})
			}
			if err != nil {
				t.Errorf("service %s: the module rejects its environment: %v", name, err)
			}
			if errors.Is(err, sdk.ErrMisconfigured) {
				t.Errorf("service %s: MODULE_UID disagrees with MODULES", name)
			}
			// A module's name is its cmd directory's, or that without "-module" (text-module
			// serves "text", so its fields are text.*).
			if arg := svc.Build.Args["MODULE"]; cfg.Module != arg && cfg.Module+"-module" != arg {
				t.Errorf("service %s: MODULE_NAME %q but builds cmd/%s", name, cfg.Module, svc.Build.Args["MODULE"])
			}
		}
	}
	if len(checked) != 2 {
		t.Fatalf("compose.yaml builds %v; want homeindexd (deploy/Dockerfile) and a module (deploy/Dockerfile.module)", checked)
	}
	if redis := c.Services["redis"]; !strings.Contains(strings.Join(redis.Command, " "), "--appendonly yes") {
		t.Errorf("redis runs %q: want --appendonly yes", redis.Command)
	}
	if img := c.Services["meilisearch"].Image; !regexp.MustCompile(`^getmeili/meilisearch:v\d+\.\d+\.\d+$`).MatchString(img) {
		t.Errorf("meilisearch image %q: want the official image pinned to a version", img)
	}
}

// interpolate applies compose's ${NAME:-default} with nothing set: the default; a required
// ${NAME:?message} gets a value as the user would set it (printable, 32 characters).
func interpolate(v string) string {
	v = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*:-([^}]*)\}`).ReplaceAllString(v, "$1")
	return regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*:\?[^}]*\}`).ReplaceAllString(v, "0123456789abcdef0123456789abcdef")
}

// stringConsts returns the values of the string constants in dir's non-test Go files whose
// names start with prefix: the environment variable names a package reads.
func stringConsts(t *testing.T, dir, prefix string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, prefix) || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						out[s] = true
					}
				}
			}
			return true
		})
	}
	return out
}

// dockerfileEnv returns the variables the ENV instructions of a Dockerfile's final stage set
// (the image's environment; KEY=value form).
func dockerfileEnv(t *testing.T, rel string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range dockerfileLines(t, rel) {
		if strings.HasPrefix(line, "FROM ") {
			clear(out) // a new stage
		}
		rest, ok := strings.CutPrefix(line, "ENV ")
		if !ok {
			continue
		}
		for _, kv := range strings.Fields(rest) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("%s: ENV %q: want KEY=value", rel, rest)
			}
			out[k] = v
		}
	}
	return out
}

// dockerfileHas reports whether an instruction of the Dockerfile matches pattern.
func dockerfileHas(t *testing.T, rel, pattern string) bool {
	re := regexp.MustCompile(pattern)
	return slices.ContainsFunc(dockerfileLines(t, rel), re.MatchString)
}

// dockerfileLines returns the instructions of a Dockerfile, continuation lines joined,
// comments dropped.
func dockerfileLines(t *testing.T, rel string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	cur := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		if cur += line; strings.TrimSpace(cur) != "" {
			out = append(out, strings.TrimSpace(cur))
		}
		cur = ""
	}
	return out
}
