// Package bench holds reference programs the daemon's benchmarks are measured against. It is
// a Go module of its own, so what it needs (asynq) never becomes a dependency of the daemon;
// scripts/bench.sh runs it in the same `make bench` as the figures it is a reference for.
package bench
