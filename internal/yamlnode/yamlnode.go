// Package yamlnode holds the small helpers the MODULES parsers (protocol for the daemon, sdk
// for modules) share over go.yaml.in/yaml/v3 nodes.
package yamlnode

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Deref follows YAML aliases (*anchor) to the node they name.
func Deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// Describe names a node for problem texts: "a mapping", "a list", "nothing" (null) or the
// quoted scalar.
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	default:
		return "something else"
	}
}
