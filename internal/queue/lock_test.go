package queue

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestLockStandbyTakesOver(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const ttl = 300 * time.Millisecond
	ok, err := b.c.AcquireLock(b.ctx, "A", ttl)
	if err != nil || !ok {
		t.Fatalf("A: %v, %v", ok, err)
	}
	if ok, err := b.c.AcquireLock(b.ctx, "B", ttl); err != nil || ok {
		t.Fatalf("B took a held lock: %v, %v", ok, err)
	}
	if err := b.c.RenewLock(b.ctx, "A", ttl); err != nil {
		t.Fatal(err)
	}
	if owner, left, err := b.c.LockHolder(b.ctx); err != nil || owner != "A" || left <= 0 || left > ttl {
		t.Fatalf("holder = %q, %v, %v", owner, left, err)
	}

	// B waits as a standby; A stops renewing (dies); B takes over once the TTL runs out.
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- b.c.WaitLock(b.ctx, "B", ttl, 20*time.Millisecond) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("standby never took over")
	}
	if waited := time.Since(start); waited < ttl/2 {
		t.Errorf("took over after %v, before A's lock could expire", waited)
	}
	if err := b.c.RenewLock(b.ctx, "A", ttl); !errors.Is(err, ErrLockLost) {
		t.Fatalf("A renew after takeover: got %v, want ErrLockLost", err)
	}
	// A clean release hands over at once.
	if err := b.c.ReleaseLock(b.ctx, "A"); err != nil { // not A's: no effect
		t.Fatal(err)
	}
	if owner, _, _ := b.c.LockHolder(b.ctx); owner != "B" {
		t.Fatalf("holder %q after a foreign release", owner)
	}
	if err := b.c.ReleaseLock(b.ctx, "B"); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.c.AcquireLock(b.ctx, "C", ttl); err != nil || !ok {
		t.Fatalf("C after release: %v, %v", ok, err)
	}
}

func TestLockRenewRetakesAfterFlush(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if ok, _ := b.c.AcquireLock(b.ctx, "A", time.Minute); !ok {
		t.Fatal("acquire")
	}
	b.srv.Flush()
	if err := b.c.RenewLock(b.ctx, "A", time.Minute); err != nil {
		t.Fatalf("renew after flush: %v", err)
	}
	if owner, _, _ := b.c.LockHolder(b.ctx); owner != "A" {
		t.Fatalf("holder %q", owner)
	}
}

func TestWaitLockCancel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.c.AcquireLock(b.ctx, "A", time.Minute)
	ctx, cancel := context.WithTimeout(b.ctx, 100*time.Millisecond)
	defer cancel()
	if err := b.c.WaitLock(ctx, "B", time.Minute, 10*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's error", err)
	}
}

func TestEpochDetectsFlush(t *testing.T) {
	t.Parallel()
	b := setup(t)
	e1, created, err := b.c.Epoch(b.ctx)
	if err != nil || !created || e1 == "" {
		t.Fatalf("first epoch: %q, %v, %v", e1, created, err)
	}
	e2, created, err := b.c.Epoch(b.ctx)
	if err != nil || created || e2 != e1 {
		t.Fatalf("second epoch: %q, %v, %v; want %q unchanged", e2, created, err, e1)
	}
	b.srv.Flush()
	e3, created, err := b.c.Epoch(b.ctx)
	if err != nil || !created || e3 == e1 {
		t.Fatalf("after FLUSHALL: %q, %v, %v; want a new epoch", e3, created, err)
	}
}
