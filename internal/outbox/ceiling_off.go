//go:build !benchceiling

package outbox

// indexWritesSkipped is false in every binary but the benchmark's ceiling (ceiling_on.go).
const indexWritesSkipped = false
