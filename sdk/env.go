package sdk

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/homeindex/homeindex/internal/yamlnode"
	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/redisconn"
	"github.com/rs/zerolog"
	"go.yaml.in/yaml/v3"
)

// Environment variables read by LoadConfig (the upstream runtime's names, plus MODULE_NAME and
// the daemon's REDIS_TLS_CA_FILE and LOG_FORMAT).
const (
	EnvModuleName      = "MODULE_NAME"
	EnvQueueName       = "QUEUE_NAME" // upstream's name for MODULE_NAME
	EnvModuleUID       = "MODULE_UID"
	EnvModules         = protocol.EnvModules
	EnvRedisHost       = "REDIS_HOST"
	EnvRedisTLSCAFile  = "REDIS_TLS_CA_FILE"
	EnvTimeout         = "TIMEOUT"
	EnvWorkerID        = "WORKER_ID"
	EnvResourceShares  = "RESOURCE_SHARES"
	EnvMetadataDir     = "METADATA_DIRECTORY"
	EnvFilesDir        = "FILES_DIRECTORY"
	EnvUIDRetrySeconds = "UID_RETRY_SECONDS"
	EnvLoggingLevel    = "LOGGING_LEVEL"
	EnvLogFormat       = "LOG_FORMAT"
)

const (
	maxDurationSeconds  = 1e7 // about 115 days: anything longer is a typo
	defaultLoggingLevel = "info"
	literalNewlineHint  = ` (the value holds a literal \n: use real line breaks, or a flow list such as [{name: gpu, seconds: 30}])`
)

// LoadConfig reads the worker's configuration from the environment through getenv (os.Getenv
// in production). It reports every problem at once in a *ConfigError. The uid check against
// MODULES happens in NewWorker.
func LoadConfig(getenv func(string) string) (Config, error) {
	var c Config
	var problems []string
	bad := func(name, value, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s=%q: %s", name, value, fmt.Sprintf(format, args...)))
	}

	name, alias := getenv(EnvModuleName), getenv(EnvQueueName)
	switch {
	case name != "" && alias != "" && name != alias:
		problems = append(problems, fmt.Sprintf("%s=%q and %s=%q differ: set one", EnvModuleName, name, EnvQueueName, alias))
	case name == "" && alias == "":
		problems = append(problems, fmt.Sprintf("%s (or %s) is required", EnvModuleName, EnvQueueName))
	case name == "":
		name = alias
	}
	if name != "" && !protocol.ValidModuleName(name) {
		bad(EnvModuleName, name, "want 1 to 64 characters from [a-z0-9_-]")
	}
	c.Module = name
	c.UID = getenv(EnvModuleUID)

	mods, err := parseModules(getenv(EnvModules))
	if err != nil {
		problems = append(problems, fmt.Sprintf("%s: %v", EnvModules, err))
	}
	c.Modules = mods

	host := cmpOrString(getenv(EnvRedisHost), DefaultRedisHost)
	if c.Redis, err = redisconn.Parse(host); err != nil {
		problems = append(problems, fmt.Sprintf("%s: %v", EnvRedisHost, err))
	}
	if ca := getenv(EnvRedisTLSCAFile); ca != "" {
		if st, err := os.Stat(ca); err != nil || st.IsDir() {
			bad(EnvRedisTLSCAFile, ca, "not a readable PEM file")
		} else if !c.Redis.TLS {
			bad(EnvRedisTLSCAFile, ca, "set but %s does not use rediss://", EnvRedisHost)
		}
		c.Redis.CAFile = ca
	}

	seconds := func(env string, dst *time.Duration) {
		v := getenv(env)
		if v == "" {
			return
		}
		d, err := parseSeconds(v)
		if err != nil {
			bad(env, v, "%v", err)
		}
		*dst = d
	}
	seconds(EnvTimeout, &c.Timeout)
	seconds(EnvUIDRetrySeconds, &c.UIDRetry)
	c.WorkerID = getenv(EnvWorkerID)

	if c.Shares, err = ParseShares(getenv(EnvResourceShares)); err != nil {
		problems = append(problems, fmt.Sprintf("%s: %v", EnvResourceShares, err))
	}

	c.MetadataDir = getenv(EnvMetadataDir)
	c.FilesDir = getenv(EnvFilesDir)

	lvl := cmpOrString(getenv(EnvLoggingLevel), defaultLoggingLevel)
	lname := strings.ToLower(strings.TrimSpace(lvl))
	switch lname { // Python's level names too
	case "warning":
		lname = "warn"
	case "critical":
		lname = "fatal"
	}
	if l, err := zerolog.ParseLevel(lname); err != nil || l == zerolog.NoLevel || lname == "" {
		bad(EnvLoggingLevel, lvl, "want debug, info, warn(ing) or error")
	} else {
		c.LogLevel = l
	}
	switch f := strings.ToLower(getenv(EnvLogFormat)); f {
	case "", "json":
	case "console":
		c.Log = zerolog.ConsoleWriter{Out: os.Stderr, NoColor: true, TimeFormat: time.RFC3339}
	default:
		bad(EnvLogFormat, f, "want json or console")
	}

	if len(problems) > 0 {
		return c, &ConfigError{Problems: problems}
	}
	return c, nil
}

func cmpOrString(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// parseSeconds reads a positive number of seconds, whole or decimal.
func parseSeconds(v string) (time.Duration, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || f <= 0 || f > maxDurationSeconds {
		return 0, errors.New("want a number of seconds > 0")
	}
	return time.Duration(f * float64(time.Second)), nil
}

// yamlRoot decodes one YAML document and returns its root node; nil for empty text. It serves
// ParseShares (RESOURCE_SHARES is the module's own); MODULES is read by protocol.ParseModulesLenient.
func yamlRoot(text string) (*yaml.Node, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlError(text, err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(text, err)
		}
		return nil, errors.New("want one YAML document, found more")
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := yamlnode.Deref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("want a YAML list, found %s", yamlnode.Describe(root))
	}
	return root, nil
}

func yamlError(text string, err error) error {
	hint := ""
	if strings.Contains(text, `\n`) && !strings.Contains(text, "\n") {
		hint = literalNewlineHint
	}
	return fmt.Errorf("invalid YAML: %w%s", err, hint)
}

// parseModules reads name and uid of each MODULES entry with protocol.ParseModulesLenient:
// the other keys are the daemon's business, so a module keeps starting when the daemon gains a
// key or tightens a rule about one. Empty text gives nil (no check). Problems are worded as
// ParseShares words its own: "entry 0: name is required".
func parseModules(text string) ([]ModuleEntry, error) {
	mods, problems := protocol.ParseModulesLenient(text)
	if len(problems) > 0 {
		texts := make([]string, len(problems))
		for i, p := range problems {
			texts[i] = moduleProblemText(p)
		}
		return nil, errors.New(strings.Join(texts, "; "))
	}
	if mods == nil {
		return nil, nil // no list: no check
	}
	out := make([]ModuleEntry, len(mods))
	for i, m := range mods {
		out[i] = ModuleEntry{Name: m.Name, UID: m.UID}
	}
	return out, nil
}

// moduleProblemText words a MODULES problem without the MODULES prefix that LoadConfig adds.
func moduleProblemText(p protocol.ModuleProblem) string {
	switch {
	case p.Entry < 0:
		return p.Reason
	case p.Field == "":
		return fmt.Sprintf("entry %d: %s", p.Entry, p.Reason)
	case p.Reason == protocol.ReasonRequired:
		return fmt.Sprintf("entry %d: %s is required", p.Entry, p.Field)
	case p.Value != "":
		return fmt.Sprintf("entry %d: %s %s: %s", p.Entry, p.Field, p.Value, p.Reason)
	default:
		return fmt.Sprintf("entry %d: %s: %s", p.Entry, p.Field, p.Reason)
	}
}

// ParseShares parses RESOURCE_SHARES: a YAML list of {name, seconds}. Unknown keys, missing or
// bad values and invalid YAML are errors (the upstream runtime silently disabled sharing).
// Empty text means no groups.
func ParseShares(text string) ([]Share, error) {
	root, err := yamlRoot(text)
	if err != nil || root == nil {
		return nil, err
	}
	var out []Share
	var problems []string
	seen := map[string]bool{}
	for i, n := range root.Content {
		n = yamlnode.Deref(n)
		if n.Kind != yaml.MappingNode {
			problems = append(problems, fmt.Sprintf("entry %d: want a mapping with name and seconds, found %s", i, yamlnode.Describe(n)))
			continue
		}
		var s Share
		var haveName, haveSeconds bool
		for j := 0; j+1 < len(n.Content); j += 2 {
			k, v := n.Content[j].Value, yamlnode.Deref(n.Content[j+1])
			switch k {
			case "name":
				haveName = true
				if v.Kind != yaml.ScalarNode || !shareNameRE.MatchString(v.Value) {
					problems = append(problems, fmt.Sprintf("entry %d: name %s: want 1 to 64 characters from [A-Za-z0-9_.-]", i, yamlnode.Describe(v)))
				}
				s.Name = v.Value
			case "seconds":
				haveSeconds = true
				d, err := parseSeconds(v.Value)
				if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!int" && v.ShortTag() != "!!float") || err != nil {
					problems = append(problems, fmt.Sprintf("entry %d: seconds %s: want a number > 0", i, yamlnode.Describe(v)))
				}
				s.Slice = d
			default:
				problems = append(problems, fmt.Sprintf("entry %d: unknown field %q (known: name, seconds)", i, k))
			}
		}
		if !haveName {
			problems = append(problems, fmt.Sprintf("entry %d: name is required", i))
		}
		if !haveSeconds {
			problems = append(problems, fmt.Sprintf("entry %d: seconds is required", i))
		}
		if haveName && seen[s.Name] {
			problems = append(problems, fmt.Sprintf("entry %d: group %q given twice", i, s.Name))
		}
		seen[s.Name] = true
		out = append(out, s)
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	return out, nil
}
