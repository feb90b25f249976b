package sdk

import (
	"testing"

	"github.com/homeindex/homeindex/internal/testutil/luatest"
)

// TestScriptCodesPinned checks that every integer a script returns is one of its named codes
// (codes.go), and that every named code is returned by the script.
func TestScriptCodesPinned(t *testing.T) {
	t.Parallel()
	for s, src := range scripts {
		luatest.CheckCodes(t, "script "+s.Hash()[:8], src, scriptCodes[s])
	}
	for s := range scriptCodes {
		if _, ok := scripts[s]; !ok {
			t.Errorf("scriptCodes names script %s, which newScript did not register", s.Hash()[:8])
		}
	}
}
