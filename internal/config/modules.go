package config

import "github.com/homeindex/homeindex/protocol"

// Module is one entry of MODULES, in pipeline order. MODULES is parsed by protocol.ParseModules,
// which modules use too (leniently), so both sides read the list the same way.
type Module = protocol.Module

func (e *env) modules(c *Config) {
	mods, problems := protocol.ParseModules(e.getenv(envModules))
	for _, p := range problems {
		e.problems = append(e.problems, p.String())
	}
	c.Modules = mods
}
