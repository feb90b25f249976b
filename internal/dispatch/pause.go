package dispatch

import (
	"context"
	"slices"
	"sync"

	"github.com/homeindex/homeindex/internal/catalog"
)

// Pauses is the set of paused modules. A paused module gets no new dispatches (jobs already
// in Redis finish); the set lives in the catalog's meta table, so it survives restarts. It is
// safe for concurrent use.
type Pauses struct {
	cat *catalog.Catalog

	mu  sync.Mutex // held across catalog I/O so Load and Set never interleave
	set map[string]bool
}

// NewPauses returns an empty set backed by cat; Load reads the persisted one.
func NewPauses(cat *catalog.Catalog) *Pauses {
	return &Pauses{cat: cat, set: map[string]bool{}}
}

// Load reads the persisted set.
func (p *Pauses) Load(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var names []string
	if _, err := p.cat.MetaJSON(ctx, catalog.MetaPaused, &names); err != nil {
		return err
	}
	p.set = map[string]bool{}
	for _, n := range names {
		p.set[n] = true
	}
	return nil
}

// Set pauses or resumes a module and persists the set; changed is false when it already was
// in that state (nothing written).
func (p *Pauses) Set(ctx context.Context, module string, paused bool) (changed bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.set[module] == paused {
		return false, nil
	}
	next := map[string]bool{}
	for n := range p.set {
		next[n] = true
	}
	if paused {
		next[module] = true
	} else {
		delete(next, module)
	}
	if err := p.cat.SetMetaJSON(ctx, catalog.MetaPaused, sortedNames(next)); err != nil {
		return false, err
	}
	p.set = next
	return true, nil
}

// Paused reports whether module is paused. A nil *Pauses pauses nothing.
func (p *Pauses) Paused(module string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.set[module]
}

// List returns the paused modules, sorted.
func (p *Pauses) List() []string {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return sortedNames(p.set)
}

func sortedNames(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
