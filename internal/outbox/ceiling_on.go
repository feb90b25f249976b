//go:build benchceiling

package outbox

// indexWritesSkipped makes writeIndex a no-op in a binary built with -tags benchceiling, which
// scripts/bench-sync.sh times beside the real sync: what the sync would take if its search
// index cost nothing. Such a binary leaves the index empty; it is never shipped.
const indexWritesSkipped = true
