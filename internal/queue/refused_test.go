package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/redisconn"
)

// Connect errors that no retry fixes are told apart from an unreachable server, and the
// password never shows in them.
func TestRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	acl := redistest.Start(t, redistest.WithACL("d on >right-password ~* +@all", "weak on >weak-password ~* -@all +auth"))
	tlsSrv := redistest.Start(t, redistest.WithTLS())
	down := redistest.Start(t)
	down.Kill()
	cases := []struct {
		name    string
		opts    Options
		refused bool
	}{
		{"wrong password", Options{Endpoint: redisconn.Endpoint{Addr: acl.Addr(), Username: "d", Password: "wrong-password"}}, true},
		{"no password", Options{Endpoint: redisconn.Endpoint{Addr: acl.Addr()}}, true},
		{"missing permissions", Options{Endpoint: redisconn.Endpoint{Addr: acl.Addr(), Username: "weak", Password: "weak-password"}}, true},
		{"unknown CA", Options{Endpoint: redisconn.Endpoint{Addr: tlsSrv.Addr(), TLS: true}}, true},
		{"unreachable", Options{Endpoint: redisconn.Endpoint{Addr: down.Addr()}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Connect(ctx, c.opts, zerolog.Nop())
			if err == nil {
				t.Fatal("Connect succeeded")
			}
			got := Refused(err)
			if (got != nil) != c.refused || (got != nil && !errors.Is(got, ErrRedisRefused)) {
				t.Fatalf("Refused(%v) = %v, want refused %v", err, got, c.refused)
			}
			if c.opts.Password != "" && strings.Contains(err.Error()+fmt.Sprint(got), c.opts.Password) {
				t.Fatalf("error shows the password: %v", got)
			}
			t.Logf("%v", cmpOr(got, err))
		})
	}
	if _, err := Connect(ctx, Options{Endpoint: redisconn.Endpoint{Addr: acl.Addr(), Username: "d", Password: "right-password"}}, zerolog.Nop()); err != nil {
		t.Fatalf("right password: %v", err)
	}
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
