package redistest

import (
	"context"
	"testing"
)

func TestStartKillRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := Start(t, WithAppendOnly())
	c := s.Client()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if err := c.Get(ctx, "k").Err(); err == nil {
		t.Fatal("GET on a killed server: got no error")
	}
	s.Restart()
	if got, err := c.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("after restart: got %q, %v; want v (AOF)", got, err)
	}
	s.Flush()
	if n, err := c.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("after flush: %d keys, %v", n, err)
	}
}

func TestArgs(t *testing.T) {
	t.Parallel()
	s := Start(t, WithArgs("--maxmemory-policy", "allkeys-lru"))
	got, err := s.Client().ConfigGet(context.Background(), "maxmemory-policy").Result()
	if err != nil || got["maxmemory-policy"] != "allkeys-lru" {
		t.Fatalf("got %v, %v", got, err)
	}
	if s.Addr() == "127.0.0.1:6379" {
		t.Fatal("used the shared Redis port")
	}
}
