package queue

import (
	"fmt"
	"testing"

	"github.com/homeindex/homeindex/internal/testutil/luatest"
)

// TestScriptCodesPinned checks that every integer a script returns is one of its named codes
// (codes.go), and that every named code is returned by the script.
func TestScriptCodesPinned(t *testing.T) {
	t.Parallel()
	seen := 0
	for i, sc := range allScripts {
		named, ok := scriptCodes[sc.s]
		if ok {
			seen++
		}
		luatest.CheckCodes(t, fmt.Sprintf("script %d (%s)", i, sc.s.Hash()[:8]), sc.src, named)
	}
	if seen != len(scriptCodes) {
		t.Errorf("scriptCodes has %d entries, %d of them registered scripts", len(scriptCodes), seen)
	}
}
