package protocol

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseRedisHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want RedisEndpoint
		str  string
	}{
		{"redis", RedisEndpoint{Addr: "redis:6379"}, "redis://redis:6379/0"},
		{"cache.lan:6380", RedisEndpoint{Addr: "cache.lan:6380"}, "redis://cache.lan:6380/0"},
		{"10.0.0.5", RedisEndpoint{Addr: "10.0.0.5:6379"}, "redis://10.0.0.5:6379/0"},
		{"::1", RedisEndpoint{Addr: "[::1]:6379"}, "redis://[::1]:6379/0"},
		{"[::1]:7000", RedisEndpoint{Addr: "[::1]:7000"}, "redis://[::1]:7000/0"},
		{"redis://redis", RedisEndpoint{Addr: "redis:6379"}, "redis://redis:6379/0"},
		{"redis://redis:6379/3", RedisEndpoint{Addr: "redis:6379", DB: 3}, "redis://redis:6379/3"},
		{"redis://:pw@redis:6379", RedisEndpoint{Addr: "redis:6379", Password: "pw"}, "redis://:***@redis:6379/0"},
		{"redis://me:pw@redis:6379/1", RedisEndpoint{Addr: "redis:6379", Username: "me", Password: "pw", DB: 1}, "redis://me:***@redis:6379/1"},
		{"redis://me:p%40ss%2Fw@redis", RedisEndpoint{Addr: "redis:6379", Username: "me", Password: "p@ss/w"}, "redis://me:***@redis:6379/0"},
		{"rediss://me:pw@secure:6380/2", RedisEndpoint{Addr: "secure:6380", Username: "me", Password: "pw", DB: 2, TLS: true}, "rediss://me:***@secure:6380/2"},
		{"REDISS://secure", RedisEndpoint{Addr: "secure:6379", TLS: true}, "rediss://secure:6379/0"},
		{"http://redis:6379", RedisEndpoint{Addr: "redis:6379"}, "redis://redis:6379/0"},
		{"http://redis", RedisEndpoint{Addr: "redis:6379"}, "redis://redis:6379/0"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseRedisHost(tt.in)
			if err != nil {
				t.Fatalf("ParseRedisHost(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseRedisHost(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
			if s := got.String(); s != tt.str {
				t.Errorf("String() = %q, want %q", s, tt.str)
			}
			if all := fmt.Sprintf("%v %+v %#v %s", got, got, got, got); got.Password != "" && strings.Contains(all, got.Password) {
				t.Errorf("the password shows in %s", all)
			}
		})
	}
}

func TestParseRedisHostErrors(t *testing.T) {
	t.Parallel()
	const secret = "Sup3r:Secret:pw"
	tests := []struct{ in, want string }{
		{"", "empty"},
		{"redis:port", `port "port" must be a number from 1 to 65535`},
		{"redis/0", "expected host, host:port"},
		{"a:b:c", "expected host or host:port"},
		{"redis://", "missing host"},
		{"redis://redis/x", `database must be a number ≥ 0: "x"`},
		{"redis://redis?db=1", "query parameters and fragments are not supported"},
		{"tcp://redis:6379", `unsupported scheme "tcp"`},
		{"redis://u:" + secret + "@redis:6379/x", `redis host "redis://u:***@redis:6379/x": database must be a number ≥ 0`},
		{"u:" + secret + "@redis:6379", `redis host "u:***@redis:6379": user and password need the redis:// or rediss:// form`},
		{"redis://u:a/" + secret + "@redis", "invalid URL (percent-encode special characters"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseRedisHost(tt.in)
			if err == nil {
				t.Fatalf("ParseRedisHost(%q) = %v, want an error", tt.in, got)
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
