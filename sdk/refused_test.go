package sdk

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/redisconn"
)

// A worker Redis refuses (wrong password, an ACL without what the SDK needs, a certificate
// that does not verify) stops with an error instead of retrying forever; an unreachable
// Redis is still waited out.
func TestServeStopsWhenRedisRefuses(t *testing.T) {
	t.Parallel()
	acl := redistest.Start(t, redistest.WithACL("m on >right-secret ~* +@all", "weak on >weak-secret ~* -@all +hello"))
	tlsSrv := redistest.Start(t, redistest.WithTLS())
	cases := []struct {
		name string
		ep   redisconn.Endpoint
		want string
	}{
		{"wrong password", redisconn.Endpoint{Addr: acl.Addr(), Username: "m", Password: "wrong-secret"}, "WRONGPASS"},
		{"missing permissions", redisconn.Endpoint{Addr: acl.Addr(), Username: "weak", Password: "weak-secret"}, "NOPERM"},
		{"unknown CA", redisconn.Endpoint{Addr: tlsSrv.Addr(), TLS: true}, "certificate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			cfg := e.config("m")
			cfg.Redis = c.ep
			w, err := NewWorker(cfg, &handler{})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err = w.Serve(ctx)
			if ctx.Err() != nil {
				t.Fatal("Serve still retrying after 10 s")
			}
			if !errors.Is(err, errRedisRefused) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Serve: %v, want a refusal mentioning %s", err, c.want)
			}
			if strings.Contains(err.Error(), c.ep.Password+"@") || (c.ep.Password != "" && e.logs.count(c.ep.Password) > 0) {
				t.Fatal("the password shows in the error or the log")
			}
		})
	}
}
