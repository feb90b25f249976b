package config

import (
	"strings"
	"testing"
)

func TestParseRedisHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		want     RedisConfig
		redacted string
	}{
		{"redis", RedisConfig{Addr: "redis:6379"}, "redis://redis:6379/0"},
		{"cache.lan:6380", RedisConfig{Addr: "cache.lan:6380"}, "redis://cache.lan:6380/0"},
		{"10.0.0.5", RedisConfig{Addr: "10.0.0.5:6379"}, "redis://10.0.0.5:6379/0"},
		{"::1", RedisConfig{Addr: "[::1]:6379"}, "redis://[::1]:6379/0"},
		{"[::1]:7000", RedisConfig{Addr: "[::1]:7000"}, "redis://[::1]:7000/0"},
		{"redis://redis", RedisConfig{Addr: "redis:6379"}, "redis://redis:6379/0"},
		{"redis://redis:6379/", RedisConfig{Addr: "redis:6379"}, "redis://redis:6379/0"},
		{"redis://redis:6379/3", RedisConfig{Addr: "redis:6379", DB: 3}, "redis://redis:6379/3"},
		{"redis://:pw@redis:6379", RedisConfig{Addr: "redis:6379", Password: "pw"}, "redis://:***@redis:6379/0"},
		{"redis://me:pw@redis:6379/1", RedisConfig{Addr: "redis:6379", Username: "me", Password: "pw", DB: 1}, "redis://me:***@redis:6379/1"},
		{"redis://me@redis", RedisConfig{Addr: "redis:6379", Username: "me"}, "redis://me@redis:6379/0"},
		{"redis://me:p%40ss%2Fw@redis", RedisConfig{Addr: "redis:6379", Username: "me", Password: "p@ss/w"}, "redis://me:***@redis:6379/0"},
		{"rediss://me:pw@secure:6380/2", RedisConfig{Addr: "secure:6380", Username: "me", Password: "pw", DB: 2, TLS: true}, "rediss://me:***@secure:6380/2"},
		{"REDISS://secure", RedisConfig{Addr: "secure:6379", TLS: true}, "rediss://secure:6379/0"},
		{"http://redis:6379", RedisConfig{Addr: "redis:6379"}, "redis://redis:6379/0"},
		{"http://redis", RedisConfig{Addr: "redis:6379"}, "redis://redis:6379/0"},
		{"redis://[::1]:6379", RedisConfig{Addr: "[::1]:6379"}, "redis://[::1]:6379/0"},
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
			if r := got.Redacted(); r != tt.redacted {
				t.Errorf("Redacted() = %q, want %q", r, tt.redacted)
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

func TestParseRedisHostErrors(t *testing.T) {
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
		{"redis://u:" + secret + "@redis:6379/x", "redis host \"redis://u:***@redis:6379/x\": database must be a number ≥ 0"},
		{"redis://u:" + secret + "@redis:70000", "port must be a number from 1 to 65535"},
		{"rediss://u:" + secret + "@redis/x", "database must be a number ≥ 0"},
		{"redis://u:" + secret + "@redis?x=1", "query parameters"},
		{"u:" + secret + "@redis:6379", `redis host "u:***@redis:6379": user and password need the redis:// or rediss:// form`},
		{secret + "@redis:6379", `redis host "Sup3r:***@redis:6379": user and password need`},
		{"redis://u:p%zz" + secret + "@redis", "invalid URL (percent-encode special characters"},
		{"redis://u:a/" + secret + "@redis", "invalid URL (percent-encode special characters"},
		{"redis://u:1/" + secret + "@redis", "database must be a number ≥ 0"},
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

// TestLoadRedisPasswordNeverShown checks the problem text and Config.String for each form
// that carries a password, valid or not.
func TestLoadRedisPasswordNeverShown(t *testing.T) {
	t.Parallel()
	const pw = "pa55word"
	for _, host := range []string{
		"redis://user:" + pw + "@redis:6379/0",
		"rediss://:" + pw + "@redis",
		"http://user:" + pw + "@redis:6379",
		"redis://user:" + pw + "@redis:bad",
		"redis://user:" + pw + "/x@redis",
		"user:" + pw + "@redis",
	} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			c, err := Load(envOf(map[string]string{"REDIS_HOST": host, "MODULES": "- name: m\n"}))
			var out string
			if err != nil {
				out = err.Error()
				if !strings.Contains(out, "REDIS_HOST") {
					t.Errorf("problem %q does not name REDIS_HOST", out)
				}
			} else {
				out = c.String() + fmtAll(c) + fmtAll(c.Redis)
				if c.Redis.Password != pw {
					t.Errorf("Password = %q, want %q", c.Redis.Password, pw)
				}
			}
			if strings.Contains(out, pw) || strings.Contains(out, "pa55") {
				t.Errorf("password shown: %s", out)
			}
		})
	}
}
