package luatest

import (
	"slices"
	"testing"
)

func TestReturns(t *testing.T) {
	t.Parallel()
	src := "if a then return 0 end\nif b then return -1 end\nreturn_x = 3\nreturn {1, 2}\nreturn 0"
	if got := Returns(src); !slices.Equal(got, []int64{-1, 0}) {
		t.Errorf("Returns = %v, want [-1 0]", got)
	}
}

func TestCheckCodesFails(t *testing.T) {
	t.Parallel()
	for _, named := range [][]int64{{0}, {0, -1, 2}, {0, 0, -1}} {
		ft := &fakeT{}
		CheckCodes(ft, "s", "return 0\nreturn -1", named)
		if !ft.failed {
			t.Errorf("CheckCodes with %v passed", named)
		}
	}
	ft := &fakeT{}
	CheckCodes(ft, "s", "return 0\nreturn -1", []int64{-1, 0})
	if ft.failed {
		t.Error("CheckCodes failed on matching codes")
	}
}

// fakeT records a failure instead of failing the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
