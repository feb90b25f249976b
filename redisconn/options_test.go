package redisconn

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestOptions(t *testing.T) {
	t.Parallel()
	e := Endpoint{Addr: "h:1", Username: "u", Password: "pw", DB: 3}
	ro, err := e.Options(Pool{Size: 7, ReadTimeout: time.Second, DialerRetries: 2, ContextTimeout: true})
	if err != nil {
		t.Fatal(err)
	}
	if ro.Addr != "h:1" || ro.Username != "u" || ro.Password != "pw" || ro.DB != 3 || ro.TLSConfig != nil {
		t.Errorf("login: %+v", ro)
	}
	if ro.PoolSize != 7 || ro.ReadTimeout != time.Second || ro.DialerRetries != 2 || !ro.ContextTimeoutEnabled {
		t.Errorf("pool: %+v", ro)
	}
	if ro.DialTimeout != DefaultDialTimeout || ro.Protocol != 2 || !ro.DisableIdentity {
		t.Errorf("shared settings: dial %v, protocol %d, identity off %v", ro.DialTimeout, ro.Protocol, ro.DisableIdentity)
	}
}

func TestOptionsTLS(t *testing.T) {
	t.Parallel()
	ro, err := Endpoint{Addr: "redis.example:6380", TLS: true}.Options(Pool{})
	if err != nil || ro.TLSConfig == nil || ro.TLSConfig.ServerName != "redis.example" || ro.TLSConfig.RootCAs != nil {
		t.Fatalf("system roots: %+v, %v", ro.TLSConfig, err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{bad, filepath.Join(dir, "missing.pem")} {
		if _, err := (Endpoint{Addr: "h:1", TLS: true, CAFile: f}).Options(Pool{}); err == nil {
			t.Errorf("CA file %s: got no error", f)
		}
	}
	if _, err := (Endpoint{}).Options(Pool{}); err == nil {
		t.Error("empty address: got no error")
	}
}
