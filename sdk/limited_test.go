package sdk

import (
	"fmt"
	"testing"
)

func TestLimitedBuffer(t *testing.T) {
	t.Parallel()
	b := LimitedBuffer{Max: 5}
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want %d, nil", s, n, err, len(s))
		}
	}
	if got := b.String(); got != "abcde" {
		t.Errorf("kept %q, want %q", got, "abcde")
	}
	fmt.Fprintf(&b, "more")
	if b.Len() != 5 {
		t.Errorf("Len = %d after the limit, want 5", b.Len())
	}
}
