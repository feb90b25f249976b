// Package luatest checks Lua scripts against the Go names of their return codes.
package luatest

import (
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// returnCode matches a Lua `return <integer>`.
var returnCode = regexp.MustCompile(`\breturn\s+(-?\d+)\b`)

// Returns lists the distinct integer literals src returns, sorted.
func Returns(src string) []int64 {
	var out []int64
	for _, m := range returnCode.FindAllStringSubmatch(src, -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// CheckCodes fails t unless the integers src returns are exactly named, and named holds no
// value twice: so the Lua and the Go that reads its replies cannot drift apart.
func CheckCodes(t testing.TB, name, src string, named []int64) {
	t.Helper()
	want := slices.Clone(named)
	slices.Sort(want)
	if len(slices.Compact(slices.Clone(want))) != len(want) {
		t.Errorf("%s: one code is named twice: %v", name, named)
	}
	want = slices.Compact(want)
	if got := Returns(src); !slices.Equal(got, want) {
		t.Errorf("%s returns %v, its named codes are %v:\n%s", name, got, want, src)
	}
}
