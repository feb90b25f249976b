package redisconn

import (
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		want     Endpoint
		redacted string
	}{
		{"redis", Endpoint{Addr: "redis:6379"}, "redis://redis:6379/0"},
		{"cache.lan:6380", Endpoint{Addr: "cache.lan:6380"}, "redis://cache.lan:6380/0"},
		{"10.0.0.5", Endpoint{Addr: "10.0.0.5:6379"}, "redis://10.0.0.5:6379/0"},
		{"::1", Endpoint{Addr: "[::1]:6379"}, "redis://[::1]:6379/0"},
		{"[::1]:7000", Endpoint{Addr: "[::1]:7000"}, "redis://[::1]:7000/0"},
		{"redis://redis", Endpoint{Addr: "redis:6379"}, "redis://redis:6379/0"},
		{"redis://redis:6379/", Endpoint{Addr: "redis:6379"}, "redis://redis:6379/0"},
		{"redis://redis:6379/3", Endpoint{Addr: "redis:6379", DB: 3}, "redis://redis:6379/3"},
		{"redis://:pw@redis:6379", Endpoint{Addr: "redis:6379", Password: "pw"}, "redis://:xxxxx@redis:6379/0"},
		{"redis://me:pw@redis:6379/1", Endpoint{Addr: "redis:6379", Username: "me", Password: "pw", DB: 1}, "redis://me:xxxxx@redis:6379/1"},
		{"redis://me@redis", Endpoint{Addr: "redis:6379", Username: "me"}, "redis://me@redis:6379/0"},
		{"redis://me:p%40ss%2Fw@redis", Endpoint{Addr: "redis:6379", Username: "me", Password: "p@ss/w"}, "redis://me:xxxxx@redis:6379/0"},
		{"rediss://me:pw@secure:6380/2", Endpoint{Addr: "secure:6380", Username: "me", Password: "pw", DB: 2, TLS: true}, "rediss://me:xxxxx@secure:6380/2"},
		{"REDISS://secure", Endpoint{Addr: "secure:6379", TLS: true}, "rediss://secure:6379/0"},
		{"http://redis:6379", Endpoint{Addr: "redis:6379"}, "redis://redis:6379/0"},
		{"http://redis", Endpoint{Addr: "redis:6379"}, "redis://redis:6379/0"},
		{"redis://[::1]:6379", Endpoint{Addr: "[::1]:6379"}, "redis://[::1]:6379/0"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Parse(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
			if s := got.String(); s != tt.redacted {
				t.Errorf("String() = %q, want %q", s, tt.redacted)
			}
			if got.Password != "" && strings.Contains(fmtAll(got), got.Password) {
				t.Errorf("the password shows in %s", fmtAll(got))
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	const secret = "Sup3r:Secret:pw"
	tests := []struct {
		in   string
		want string
	}{
		{"", "empty"},
		{"redis:port", `port "port" must be a number from 1 to 65535`},
		{"redis:99999", `port "99999" must be a number`},
		{"redis/0", "expected host, host:port"},
		{"re dis", "expected host, host:port"},
		{"a:b:c", "expected host or host:port"},
		{":6379", "missing host"},
		{"redis://", "missing host"},
		{"redis://:6379", "missing host"},
		{"redis://redis:0", `port must be a number from 1 to 65535: "0"`},
		{"redis://redis/x", `database must be a number ≥ 0: "x"`},
		{"redis://redis/-1", `database must be a number ≥ 0: "-1"`},
		{"redis://redis/1/2", `database must be a number ≥ 0: "1/2"`},
		{"redis://redis?db=1", "query parameters and fragments are not supported"},
		{"tcp://redis:6379", `unsupported scheme "tcp"`},
		{"https://redis:6379", `unsupported scheme "https"`},
		{"redis://red is", "invalid URL"},
		// With a password, nothing of the value but the redacted form may show.
		{"redis://u:" + secret + "@redis:6379/x", "redis host \"redis://u:xxxxx@redis:6379/x\": database must be a number ≥ 0"},
		{"redis://u:" + secret + "@redis:70000", "port must be a number from 1 to 65535"},
		{"rediss://u:" + secret + "@redis/x", "database must be a number ≥ 0"},
		{"redis://u:" + secret + "@redis?x=1", "query parameters"},
		{"u:" + secret + "@redis:6379", `redis host "u:xxxxx@redis:6379": user and password need the redis:// or rediss:// form`},
		{secret + "@redis:6379", `redis host "Sup3r:xxxxx@redis:6379": user and password need`},
		{"redis://u:p%zz" + secret + "@redis", "invalid URL (percent-encode special characters"},
		{"redis://u:a/" + secret + "@redis", "invalid URL (percent-encode special characters"},
		{"redis://u:1/" + secret + "@redis", "database must be a number ≥ 0"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error", tt.in, got)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
			for _, part := range []string{secret, "Secret", ":pw"} {
				if strings.Contains(err.Error(), part) {
					t.Errorf("error %q shows part of the password (%q)", err, part)
				}
			}
		})
	}
}

// fmtAll formats v every way a log line or error might.
func fmtAll(v any) string { return fmt.Sprintf("%v %+v %#v %s", v, v, v, v) }
