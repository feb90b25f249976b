package state

import "slices"

// Plan is what changed between the previous module list and the current one.
type Plan struct {
	// RequeueFrom is the index in cur of the first changed position: the first i where
	// prev has no module i, or prev[i] and cur[i] differ in name or uid. It is -1 when nothing
	// changed, when cur is prev with modules removed from the end, and on first start. Since
	// prev[:RequeueFrom] == cur[:RequeueFrom], it is also the change point's index in prev.
	RequeueFrom int
	// Removed lists the names in prev that are not in cur, in prev's order.
	Removed []string
	// UIDChanged lists the names in both lists whose uid changed, in cur's order: queue items
	// of these modules that carry another uid must be purged.
	UIDChanged []string
	// Unchanged is true when prev and cur are equal: nothing moves, nothing is purged.
	Unchanged bool
	// FirstStart is true when there was no previous state (prev nil): nothing moves, every
	// document keeps the next the catalog has.
	FirstStart bool
}

// Diff compares the previous list (from Load; nil when not found) with the current one.
// Names are unique within each list (the config rejects duplicates); with duplicates, the
// first occurrence counts.
func Diff(prev, cur []Module) Plan {
	if prev == nil {
		return Plan{RequeueFrom: -1, FirstStart: true}
	}
	p := Plan{RequeueFrom: -1, Unchanged: slices.Equal(prev, cur)}
	for i := range cur {
		if i >= len(prev) || prev[i] != cur[i] {
			p.RequeueFrom = i
			break
		}
	}
	for _, m := range prev {
		if indexOf(cur, m.Name) < 0 {
			p.Removed = append(p.Removed, m.Name)
		}
	}
	for _, m := range cur {
		if j := indexOf(prev, m.Name); j >= 0 && prev[j].UID != m.UID {
			p.UIDChanged = append(p.UIDChanged, m.Name)
		}
	}
	return p
}

// indexOf returns the position of the module called name in mods, or -1.
func indexOf(mods []Module, name string) int {
	return slices.IndexFunc(mods, func(m Module) bool { return m.Name == name })
}
