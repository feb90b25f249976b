package redistest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// WithACL and WithTLS: the admin client works over TLS, an ACL user is held to its rules,
// a wrong password and a plain-text client are refused, and Restart keeps all of it.
func TestACLAndTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := Start(t, WithTLS(), WithACL("app on >app-secret resetkeys ~app:* -@all +hello +ping +set +get"))
	if s.CAFile() == "" || s.AdminPassword() == "" {
		t.Fatalf("CAFile %q, AdminPassword set %v", s.CAFile(), s.AdminPassword() != "")
	}
	if !strings.HasPrefix(s.URL("app", "app-secret"), "rediss://app:app-secret@127.0.0.1:") {
		t.Fatalf("URL %q", s.URL("app", "app-secret"))
	}
	check := func() {
		t.Helper()
		if err := s.Client().Set(ctx, "other", "v", 0).Err(); err != nil {
			t.Fatalf("admin SET: %v", err)
		}
		app := s.ClientAs("app", "app-secret")
		if err := app.Set(ctx, "app:k", "v", 0).Err(); err != nil {
			t.Fatalf("app SET app:k: %v", err)
		}
		if err := app.Set(ctx, "other", "v", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
			t.Fatalf("app SET other: got %v, want NOPERM", err)
		}
		if err := s.ClientAs("app", "wrong").Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Fatalf("wrong password: got %v, want WRONGPASS", err)
		}
		plain := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, Username: "app", Password: "app-secret", ReadTimeout: time.Second})
		defer plain.Close()
		if err := plain.Ping(ctx).Err(); err == nil {
			t.Fatal("a plain-text client was answered by a TLS-only server")
		}
	}
	check()
	s.Restart()
	check()
}
