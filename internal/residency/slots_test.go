package residency

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// TestSlotsReclaimFirst: with every slot taken and creates queued first, a
// freed slot goes to a reclaim that queued after them; the creates follow
// in their order.
func TestSlotsReclaimFirst(t *testing.T) { synctest.Test(t, testSlotsReclaimFirst) }

func testSlotsReclaimFirst(t *testing.T) {
	s := newSlots(1)
	ctx := t.Context()
	if err := s.acquire(ctx, prioRestore); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 3)
	start := func(name string, p slotPriority) {
		go func() {
			if err := s.acquire(ctx, p); err != nil {
				order <- "error " + name
				return
			}
			order <- name
			s.release()
		}()
	}
	start("create-1", prioRestore)
	waitWaiters(t, s, prioRestore, 1)
	start("create-2", prioRestore)
	waitWaiters(t, s, prioRestore, 2)
	start("page-out", prioReclaim)
	waitWaiters(t, s, prioReclaim, 1)
	if s.tryAcquire() {
		t.Fatal("tryAcquire took a slot with others waiting")
	}
	s.release()
	var got []string
	for range 3 {
		got = append(got, <-order)
	}
	want := []string{"page-out", "create-1", "create-2"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
	if !s.tryAcquire() || s.tryAcquire() {
		t.Fatal("after every waiter released, want exactly one free slot")
	}
}

// TestSlotsCancel: a waiter whose context ends leaves the queue holding
// nothing, and the slot count is unchanged.
func TestSlotsCancel(t *testing.T) { synctest.Test(t, testSlotsCancel) }

func testSlotsCancel(t *testing.T) {
	s := newSlots(1)
	if err := s.acquire(t.Context(), prioReclaim); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.acquire(ctx, prioRestore) }()
	waitWaiters(t, s, prioRestore, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire after cancel = %v, want context.Canceled", err)
	}
	s.release()
	if !s.tryAcquire() {
		t.Fatal("the released slot is not free")
	}
	if s.tryAcquire() {
		t.Fatal("a cancelled waiter kept a slot")
	}
}

// waitWaiters waits until every goroutine of the bubble blocks, then
// checks that n waiters of priority p are queued.
func waitWaiters(t *testing.T, s *slots, p slotPriority, n int) {
	t.Helper()
	synctest.Wait()
	s.mu.Lock()
	k := len(s.waiters[p])
	s.mu.Unlock()
	if k != n {
		t.Fatalf("%d waiters of priority %d, want %d", k, p, n)
	}
}
