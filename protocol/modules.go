package protocol

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/homeindex/homeindex/internal/yamlnode"
)

// EnvModules is the environment variable that daemon and modules read the module list from.
const EnvModules = "MODULES"

// Module is one entry of MODULES, in pipeline order.
type Module struct {
	Name                 string   // queue prefix; matches ModuleNamePattern
	UID                  string   // the module build's uid; may be empty
	FilterableAttributes []string // extra filterable attributes for the search index
	SortableAttributes   []string // extra sortable attributes for the search index
	Window               int      // dispatch window for this module; 0 = the daemon's DISPATCH_WINDOW
}

// ModuleNamePattern is what a module name in MODULES must match: it becomes part of Redis keys
// and of metadata directory names, so no '/', ':', '.' or upper case, and it starts with a letter
// or digit. It is stricter than ValidModuleName, which only keeps a name inside its key prefix.
const ModuleNamePattern = `^[a-z0-9][a-z0-9_-]{0,63}$`

// AttributePattern is what a filterable or sortable attribute must match.
const AttributePattern = `^[A-Za-z0-9_.-]+$`

var (
	moduleNameRE = regexp.MustCompile(ModuleNamePattern)
	attributeRE  = regexp.MustCompile(AttributePattern)
)

// literalNewlineHint is added to an invalid-YAML problem when the text holds `\n` but no line
// break: the usual result of quoting a YAML list on one line in a compose file or shell.
const literalNewlineHint = ` (the value holds a literal \n: use real line breaks, or a flow list such as [{name: ocr, uid: "1"}])`

// ModuleProblem is one thing wrong with a MODULES value. String gives the daemon's one-line text
// (`MODULES[2].name "Bad Name": must match ...`); the fields let a module word it its own way.
type ModuleProblem struct {
	Entry  int    // index of the list entry at fault; -1 when the value as a whole is at fault
	Field  string // what in the entry is at fault: a key ("name"), a list item ("sortable_attributes[1]"); "" for the entry
	Value  string // the offending value, quoted as the texts show it; "" when none is shown
	Reason string // what is wrong: ReasonRequired, "must be a string, found a list", ...
}

// ReasonRequired is the Reason of a ModuleProblem for a missing field.
const ReasonRequired = "required"

// String renders p as `MODULES[i].field "value": reason`, leaving out what p does not have.
func (p ModuleProblem) String() string {
	var b strings.Builder
	b.WriteString(EnvModules)
	if p.Entry >= 0 {
		fmt.Fprintf(&b, "[%d]", p.Entry)
	}
	if p.Field != "" {
		b.WriteString("." + p.Field)
	}
	if p.Value != "" {
		b.WriteString(" " + p.Value)
	}
	b.WriteString(": " + p.Reason)
	return b.String()
}

// ParseModules parses the MODULES YAML list as the daemon does: unknown keys are problems, like a
// strict decoder's, and every bad entry gets its own problem naming its index and field. Empty
// text (or only comments, or null) means no modules. When problems is not empty the modules must
// not be used.
func ParseModules(text string) (modules []Module, problems []ModuleProblem) {
	return parseModules(text, true)
}

// ParseModulesLenient parses MODULES as a module process does: only what a module reads is
// checked, the shape of the list and each entry's name and uid. The other keys belong to the
// daemon and are ignored whatever their values (the Modules returned carry Name and UID only),
// so a module does not fail when the daemon gains a key, or tightens a rule about one. For the
// same reason the daemon's name rules (ModuleNamePattern, no duplicates) are not applied, and a
// key given twice keeps its last value, as YAML loaders commonly do. Unlike ParseModules, it
// returns a non-nil list whenever text holds a list, even an empty one: a module told
// MODULES=[] is in no pipeline, which is not the same as MODULES being unset.
func ParseModulesLenient(text string) (modules []Module, problems []ModuleProblem) {
	return parseModules(text, false)
}

func parseModules(text string, strict bool) ([]Module, []ModuleProblem) {
	root, problem := moduleListRoot(text)
	if problem != "" {
		return nil, []ModuleProblem{{Entry: -1, Reason: problem}}
	}
	if root == nil {
		return nil, nil
	}
	p := &moduleParser{strict: strict}
	var modules []Module
	if !strict {
		modules = []Module{} // an empty list names no modules, which differs from no list
	}
	seen := map[string]int{}
	for i, item := range root.Content {
		m, ok := p.module(i, yamlnode.Deref(item))
		if !ok {
			continue
		}
		if first, dup := seen[m.Name]; dup && strict {
			p.problem(i, "name", strconv.Quote(m.Name), "duplicate of %s[%d]", EnvModules, first)
			continue
		}
		seen[m.Name] = i
		modules = append(modules, m)
	}
	if len(p.problems) > 0 {
		return nil, p.problems
	}
	return modules, nil
}

// moduleListRoot decodes one YAML document and returns its root sequence: nil for no modules, or
// a problem text.
func moduleListRoot(text string) (*yaml.Node, string) {
	if strings.TrimSpace(text) == "" {
		return nil, ""
	}
	invalid := func(err error) string {
		hint := ""
		if strings.Contains(text, `\n`) && !strings.Contains(text, "\n") {
			hint = literalNewlineHint
		}
		return "invalid YAML: " + err.Error() + hint
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, "" // comments only
		}
		return nil, invalid(err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, invalid(err)
		}
		return nil, "must be one YAML document, found more"
	}
	if len(doc.Content) == 0 {
		return nil, ""
	}
	root := yamlnode.Deref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, ""
	}
	if root.Kind != yaml.SequenceNode {
		return nil, "must be a YAML list of modules, found " + yamlnode.Describe(root)
	}
	return root, ""
}

type moduleParser struct {
	strict   bool // the daemon's checks; see ParseModulesLenient for what is left out
	problems []ModuleProblem
}

func (p *moduleParser) problem(entry int, field, value, format string, args ...any) {
	p.problems = append(p.problems, ModuleProblem{Entry: entry, Field: field, Value: value, Reason: fmt.Sprintf(format, args...)})
}

// module reads one entry; ok is false when its name is missing or bad.
func (p *moduleParser) module(i int, n *yaml.Node) (m Module, ok bool) {
	if n.Kind != yaml.MappingNode {
		p.problem(i, "", "", "must be a mapping with name and uid, found %s", yamlnode.Describe(n))
		return m, false
	}
	hasName := false
	seen := map[string]bool{}
	for j := 0; j+1 < len(n.Content); j += 2 {
		key, v := n.Content[j].Value, yamlnode.Deref(n.Content[j+1])
		if seen[key] && p.strict {
			p.problem(i, key, "", "given twice")
			continue
		}
		seen[key] = true
		switch key {
		case "name":
			hasName = true
			m.Name, ok = p.name(i, v)
		case "uid":
			m.UID = p.uid(i, v)
		case "filterable_attributes", "sortable_attributes", "window":
			if !p.strict {
				continue // the daemon's business
			}
			switch key {
			case "filterable_attributes":
				m.FilterableAttributes = p.attributes(i, key, v)
			case "sortable_attributes":
				m.SortableAttributes = p.attributes(i, key, v)
			default:
				m.Window = p.window(i, v)
			}
		default:
			if p.strict {
				p.problem(i, "", "", "unknown field %q (known: name, uid, filterable_attributes, sortable_attributes, window)", key)
			}
		}
	}
	if !hasName {
		p.problem(i, "name", "", ReasonRequired)
	}
	return m, ok
}

func (p *moduleParser) name(i int, v *yaml.Node) (string, bool) {
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
		p.problem(i, "name", "", "must be a string, found %s", yamlnode.Describe(v))
		return "", false
	}
	switch {
	case p.strict && !moduleNameRE.MatchString(v.Value):
		p.problem(i, "name", strconv.Quote(v.Value), "must match %s", ModuleNamePattern)
		return "", false
	case v.Value == "":
		p.problem(i, "name", "", ReasonRequired)
		return "", false
	}
	return v.Value, true
}

// uid keeps any scalar as written: YAML may read an unquoted uid as a number, and its text is
// what the module compares with.
func (p *moduleParser) uid(i int, v *yaml.Node) string {
	if v.Kind != yaml.ScalarNode {
		p.problem(i, "uid", "", "must be a string, found %s", yamlnode.Describe(v))
		return ""
	}
	if v.ShortTag() == "!!null" {
		return ""
	}
	return v.Value
}

func (p *moduleParser) attributes(i int, key string, v *yaml.Node) []string {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		p.problem(i, key, "", "must be a list, found %s", yamlnode.Describe(v))
		return nil
	}
	attrs := make([]string, 0, len(v.Content))
	for k, a := range v.Content {
		a = yamlnode.Deref(a)
		if a.Kind != yaml.ScalarNode || !attributeRE.MatchString(a.Value) {
			p.problem(i, fmt.Sprintf("%s[%d]", key, k), strconv.Quote(a.Value), "must match %s", AttributePattern)
			continue
		}
		attrs = append(attrs, a.Value)
	}
	return attrs
}

func (p *moduleParser) window(i int, v *yaml.Node) int {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		return 0
	}
	var w int
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&w) != nil || w < 1 {
		p.problem(i, "window", strconv.Quote(v.Value), "must be an integer ≥ 1")
		return 0
	}
	return w
}
