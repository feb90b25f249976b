package sdk

import (
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// returnCode matches a Lua `return <integer>`.
var returnCode = regexp.MustCompile(`\breturn\s+(-?\d+)\b`)

// TestScriptCodesPinned checks that every integer a script returns is one of its named codes
// (codes.go) and that every named code is returned by the script, so the Lua and the Go
// switches cannot drift apart.
func TestScriptCodesPinned(t *testing.T) {
	t.Parallel()
	seen := 0
	for s, src := range scripts {
		var lua []int64
		for _, m := range returnCode.FindAllStringSubmatch(src, -1) {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			if !slices.Contains(lua, n) {
				lua = append(lua, n)
			}
		}
		named, ok := scriptCodes[s]
		if !ok {
			if len(lua) > 0 {
				t.Errorf("script returns %v but has no entry in scriptCodes:\n%s", lua, src)
			}
			continue
		}
		seen++
		slices.Sort(lua)
		want := slices.Clone(named)
		slices.Sort(want)
		want = slices.Compact(want)
		if !slices.Equal(lua, want) {
			t.Errorf("script returns %v, scriptCodes names %v:\n%s", lua, want, src)
		}
	}
	if seen != len(scriptCodes) {
		t.Errorf("scriptCodes has %d entries, %d of them registered scripts", len(scriptCodes), seen)
	}
}

// TestScriptCodesDistinct checks that no two names of one script share a value.
func TestScriptCodesDistinct(t *testing.T) {
	t.Parallel()
	for s, codes := range scriptCodes {
		c := slices.Clone(codes)
		slices.Sort(c)
		if len(slices.Compact(c)) != len(codes) {
			t.Errorf("script %s names one code twice: %v", s.Hash(), codes)
		}
	}
}
