//go:build !race

package e2e

// raceEnabled: the suite runs without -race, so the binaries it starts are built without it.
const raceEnabled = false
