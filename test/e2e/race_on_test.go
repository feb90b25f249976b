//go:build race

package e2e

// raceEnabled: the suite runs with -race, so the binaries it starts are built with it too.
const raceEnabled = true
