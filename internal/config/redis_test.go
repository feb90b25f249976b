package config

import (
	"strings"
	"testing"
)

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
