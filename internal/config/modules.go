package config

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Module is one entry of MODULES, in pipeline order.
type Module struct {
	Name                 string   // queue prefix; matches ModuleNamePattern
	UID                  string   // the module build's uid; may be empty
	FilterableAttributes []string // extra filterable attributes for the search index
	SortableAttributes   []string // extra sortable attributes for the search index
	Window               int      // dispatch window for this module; 0 = DISPATCH_WINDOW
}

// ModuleNamePattern is what a module name must match: it becomes part of Redis keys and of
// metadata directory names, so no '/', ':', '.' or upper case.
const ModuleNamePattern = `^[a-z0-9][a-z0-9_-]{0,63}$`

// AttributePattern is what a filterable or sortable attribute must match.
const AttributePattern = `^[A-Za-z0-9_.-]+$`

var (
	moduleNameRE = regexp.MustCompile(ModuleNamePattern)
	attributeRE  = regexp.MustCompile(AttributePattern)
)

// ParseModules parses the MODULES YAML list. Unknown keys are problems, like a strict decoder's,
// and every bad entry gets its own problem naming its index and field
// (`MODULES[2].name "Bad Name": must match ...`). Empty text means no modules. When problems
// is not empty the modules must not be used.
func ParseModules(text string) (modules []Module, problems []string) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // comments only
		}
		return nil, []string{envModules + ": invalid YAML: " + err.Error()}
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, []string{envModules + ": invalid YAML: " + err.Error()}
		}
		return nil, []string{envModules + ": must be one YAML document, found more"}
	}

	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := deref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.SequenceNode {
		return nil, []string{fmt.Sprintf("%s: must be a YAML list of modules, found %s", envModules, describe(root))}
	}

	p := &moduleParser{}
	seen := map[string]int{}
	for i, item := range root.Content {
		m := p.module(i, deref(item))
		if m.Name == "" {
			continue
		}
		if first, dup := seen[m.Name]; dup {
			p.problemf("%s[%d].name %q: duplicate of %s[%d]", envModules, i, m.Name, envModules, first)
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

type moduleParser struct{ problems []string }

func (p *moduleParser) problemf(format string, args ...any) {
	p.problems = append(p.problems, fmt.Sprintf(format, args...))
}

// module reads one entry; its Name is "" when the name is missing or bad.
func (p *moduleParser) module(i int, n *yaml.Node) Module {
	var m Module
	if n.Kind != yaml.MappingNode {
		p.problemf("%s[%d]: must be a mapping with name and uid, found %s", envModules, i, describe(n))
		return m
	}
	hasName := false
	seen := map[string]bool{}
	for j := 0; j+1 < len(n.Content); j += 2 {
		key, v := n.Content[j].Value, deref(n.Content[j+1])
		field := fmt.Sprintf("%s[%d].%s", envModules, i, key)
		if seen[key] {
			p.problemf("%s: given twice", field)
			continue
		}
		seen[key] = true
		switch key {
		case "name":
			hasName = true
			m.Name = p.name(field, v)
		case "uid":
			m.UID = p.uid(field, v)
		case "filterable_attributes":
			m.FilterableAttributes = p.attributes(field, v)
		case "sortable_attributes":
			m.SortableAttributes = p.attributes(field, v)
		case "window":
			m.Window = p.window(field, v)
		default:
			p.problemf("%s[%d]: unknown field %q (known: name, uid, filterable_attributes, sortable_attributes, window)", envModules, i, key)
		}
	}
	if !hasName {
		p.problemf("%s[%d].name: required", envModules, i)
	}
	return m
}

func (p *moduleParser) name(field string, v *yaml.Node) string {
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
		p.problemf("%s: must be a string, found %s", field, describe(v))
		return ""
	}
	if !moduleNameRE.MatchString(v.Value) {
		p.problemf("%s %q: must match %s", field, v.Value, ModuleNamePattern)
		return ""
	}
	return v.Value
}

// uid keeps any scalar as written: YAML may read an unquoted uid as a number, and its text is
// what the module compares with.
func (p *moduleParser) uid(field string, v *yaml.Node) string {
	if v.Kind != yaml.ScalarNode {
		p.problemf("%s: must be a string, found %s", field, describe(v))
		return ""
	}
	if v.ShortTag() == "!!null" {
		return ""
	}
	return v.Value
}

func (p *moduleParser) attributes(field string, v *yaml.Node) []string {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		p.problemf("%s: must be a list, found %s", field, describe(v))
		return nil
	}
	attrs := make([]string, 0, len(v.Content))
	for k, a := range v.Content {
		a = deref(a)
		if a.Kind != yaml.ScalarNode || !attributeRE.MatchString(a.Value) {
			p.problemf("%s[%d] %q: must match %s", field, k, a.Value, AttributePattern)
			continue
		}
		attrs = append(attrs, a.Value)
	}
	return attrs
}

func (p *moduleParser) window(field string, v *yaml.Node) int {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		return 0
	}
	var w int
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&w) != nil || w < 1 {
		p.problemf("%s %q: must be an integer ≥ 1", field, v.Value)
		return 0
	}
	return w
}

// deref follows YAML aliases (*anchor) to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// describe names a node's kind for problem texts.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	default:
		return "something else"
	}
}
