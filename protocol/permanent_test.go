package protocol

import "testing"

func TestDonePermanent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		want bool
	}{
		{`{"module":"m","document":{"id":"a"},"_hi_error":"boom","_hi_permanent":true}`, true},
		{`{"module": "m", "document": {"id": "a"}, "_hi_error": "boom", "_hi_permanent": true}`, true},
		{`{"module":"m","document":{"id":"a"},"_hi_error":"boom","_hi_permanent":false}`, false},
		{`{"module":"m","document":{"id":"a"},"_hi_error":"boom"}`, false},
		{`{"module":"m","document":{"id":"a"},"_HI_PERMANENT":true}`, false},
		{`{"module":"m","document":{"id":"a","_hi_permanent":true}}`, false},
		{`not json`, false},
	} {
		if got := DonePermanent([]byte(tc.raw)); got != tc.want {
			t.Errorf("DonePermanent(%s) = %v, want %v", tc.raw, got, tc.want)
		}
	}
}
