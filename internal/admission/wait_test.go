package admission

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWaitCancelledAfterAdmission: ctx ends while the ticket is already
// admitted. Wait must return nil (the caller owns the charge), not deadlock
// on the admitter's lock.
func TestWaitCancelledAfterAdmission(t *testing.T) {
	// Both the ready and the done channel are ready, and select picks one
	// at random: repeat so the cancelled branch runs (1 - 2^-64 certain).
	for range 64 {
		waitCancelledAfterAdmission(t)
	}
}

func waitCancelledAfterAdmission(t *testing.T) {
	t.Helper()
	c := newClock()
	a := New(Config{Budget: 1000 * mib}, c.now)
	tk := a.Enqueue(Request{ID: "x", Descriptor: desc(100, 100)})
	a.Schedule(plenty, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	go func() { done <- a.Wait(ctx, tk) }()
	select {
	case err := <-done:
		// Both channels are ready; either branch of Wait's select may run.
		if err != nil {
			t.Errorf("Wait = %v, want nil for an admitted ticket", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait deadlocked after the context ended")
	}
	if err := a.Release(tk); err != nil {
		t.Errorf("release: %v", err)
	}
}

// TestWaitCancelledWhileQueued: ctx ends while the ticket still waits.
func TestWaitCancelledWhileQueued(t *testing.T) {
	c := newClock()
	a := New(Config{Budget: 100 * mib}, c.now)
	keep := fill(t, a, 100)
	tk := a.Enqueue(Request{ID: "x", Descriptor: desc(50, 50)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Wait(ctx, tk); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait = %v, want context.Canceled", err)
	}
	if tk.State() != Cancelled {
		t.Errorf("state %v, want cancelled", tk.State())
	}
	_ = a.Release(keep)
}
