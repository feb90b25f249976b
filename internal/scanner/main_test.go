package scanner

import (
	"os"
	"testing"
)

// TestMain removes the benchmark fixtures, which are built once per process and shared.
func TestMain(m *testing.M) {
	code := m.Run()
	removeBenchFixtures()
	os.Exit(code)
}
