package admission

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// simulate runs an endless stream of light actions (60..100 MiB, 2 s each,
// always 3 waiting) on a 1000 MiB budget, scheduling every 100 ms; after 5 s,
// when the budget is full of light work, a heavy action (800 MiB) arrives.
// It returns how long the heavy action waited (or -1) and how many light
// actions were admitted meanwhile.
func simulate(t *testing.T, beta float64, horizon time.Duration) (time.Duration, int) {
	t.Helper()
	c := newClock()
	start := c.now().Add(5 * time.Second)
	a := New(Config{Budget: 1000 * mib, Beta: beta}, c.now)
	var heavy *Ticket
	running := map[*Ticket]time.Time{}
	admittedAt := time.Duration(-1)
	lights, n := 0, 0
	for c.now().Sub(start) < horizon {
		if heavy == nil && !c.now().Before(start) {
			if s := a.Snapshot(); s.Level < 900*mib {
				t.Fatalf("budget not full of light work when the heavy action arrives: level %d MiB", s.Level/mib)
			}
			heavy = a.Enqueue(Request{ID: "heavy", Descriptor: desc(800, 800)})
			if !heavy.Heavy() {
				t.Fatal("800 MiB of 1000 is not heavy")
			}
			lights = 0
		}
		for tk, end := range running {
			if !c.now().Before(end) {
				if err := a.Release(tk); err != nil {
					t.Fatal(err)
				}
				delete(running, tk)
			}
		}
		for len(a.Snapshot().Light) < 3 {
			a.Enqueue(Request{ID: fmt.Sprint("light-", n), Descriptor: desc(60, 100)})
			n++
		}
		for _, tk := range a.Schedule(plenty, 0) {
			if tk == heavy {
				admittedAt = c.now().Sub(start)
				return admittedAt, lights
			}
			lights++
			running[tk] = c.now().Add(2 * time.Second)
		}
		if s := a.Snapshot(); s.Level > s.Budget {
			t.Fatalf("level %d MiB above budget", s.Level/mib)
		}
		c.step(100 * time.Millisecond)
	}
	return admittedAt, lights
}

func TestHeavyNotStarved(t *testing.T) {
	beta := float64(1000*mib) / 60 // the default for this budget
	// Bound: credit reaches the heavy peak after peak/β; then the running
	// light actions (2 s) drain; plus one scheduling period.
	bound := time.Duration(800*mib/beta*float64(time.Second)) + 2*time.Second + 100*time.Millisecond
	got, lights := simulate(t, beta, 10*bound)
	if got < 0 || got > bound {
		t.Fatalf("heavy admitted after %v, want within %v", got, bound)
	}
	if lights < 100 {
		t.Errorf("only %d light actions ran while the heavy one waited %v: light work was held back", lights, got)
	}
	t.Logf("heavy admitted after %v (bound %v), %d light actions ran meanwhile", got, bound, lights)

	// Without credit the same stream starves it: the test can fail.
	if got, _ := simulate(t, 1e-9, 10*bound); got >= 0 {
		t.Errorf("with no credit the heavy action was admitted after %v: the workload does not stress starvation", got)
	}
}

func TestLightCannotUseCredit(t *testing.T) {
	c := newClock()
	beta := float64(10 * mib) // 10 MiB/s
	a := New(Config{Budget: 1000 * mib, Beta: beta}, c.now)
	fill(t, a, 500)
	heavy := a.Enqueue(Request{ID: "heavy", Descriptor: desc(900, 900)})
	c.step(20 * time.Second) // 200 MiB of credit
	s := a.Snapshot()
	if s.Credit != 200*mib || s.CreditOwner != "heavy" {
		t.Fatalf("credit %d MiB owned by %q, want 200 MiB owned by heavy", s.Credit/mib, s.CreditOwner)
	}
	tooBig := a.Enqueue(Request{ID: "too-big", Descriptor: desc(301, 301)}) // fits 500 free, not 300 unprotected
	fits := a.Enqueue(Request{ID: "fits", Descriptor: desc(100, 100)})
	got := a.Schedule(plenty, 0)
	if len(got) != 1 || got[0] != fits || tooBig.State() != Waiting || heavy.State() != Waiting {
		t.Fatalf("admitted %v; want only %q", ids(got), "fits")
	}
	c.step(100 * time.Second)
	if s := a.Snapshot(); s.Credit != 900*mib {
		t.Errorf("credit %d MiB, want capped at the heavy peak 900 MiB", s.Credit/mib)
	}
}

func TestCreditMovesToNextHeavy(t *testing.T) {
	c := newClock()
	a := New(Config{Budget: 1000 * mib, Beta: float64(10 * mib)}, c.now)
	h1 := a.Enqueue(Request{ID: "h1", Descriptor: desc(400, 400)})
	c.step(time.Second)
	a.Enqueue(Request{ID: "h2", Descriptor: desc(700, 700)})
	c.step(10 * time.Second)
	if got := a.Schedule(plenty, 0); len(got) != 1 || got[0] != h1 {
		t.Fatalf("admitted %v, want h1", ids(got))
	}
	if s := a.Snapshot(); s.CreditOwner != "h2" || s.Credit != 0 {
		t.Errorf("after h1: credit %d MiB owned by %q, want 0 owned by h2", s.Credit/mib, s.CreditOwner)
	}
	c.step(3 * time.Second)
	if s := a.Snapshot(); s.Credit != 30*mib {
		t.Errorf("credit %d MiB, want 30", s.Credit/mib)
	}
}

func TestWait(t *testing.T) {
	c := newClock()
	a := New(Config{Budget: 1000 * mib}, c.now)
	tk := a.Enqueue(Request{ID: "x", Descriptor: desc(100, 100)})
	done := make(chan error)
	go func() { done <- a.Wait(context.Background(), tk) }()
	a.Schedule(plenty, 0)
	if err := <-done; err != nil {
		t.Fatalf("Wait: %v", err)
	}

	fill(t, a, 900)
	blocked := a.Enqueue(Request{ID: "blocked", Descriptor: desc(500, 500)})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- a.Wait(ctx, blocked) }()
	a.Schedule(plenty, 0)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after cancel: %v, want context.Canceled", err)
	}
	if blocked.State() != Cancelled || len(a.Snapshot().Light) != 0 {
		t.Errorf("cancelled wait left ticket %v and %d queued", blocked.State(), len(a.Snapshot().Light))
	}

	other := a.Enqueue(Request{ID: "other", Descriptor: desc(500, 500)})
	go func() { done <- a.Wait(context.Background(), other) }()
	a.Cancel(other)
	if err := <-done; !errors.Is(err, ErrCancelled) {
		t.Errorf("Wait on a cancelled ticket: %v, want ErrCancelled", err)
	}
}
