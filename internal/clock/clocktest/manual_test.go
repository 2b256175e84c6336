package clocktest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fired reports whether ch holds a value, and which.
func fired(ch <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-ch:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestNowSetAdvance(t *testing.T) {
	m := NewManual(t0)
	if got := m.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	m.Advance(3 * time.Second)
	if got := m.Now(); !got.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("after Advance(3s) Now = %v", got)
	}
	m.Set(t0)
	if got := m.Now(); !got.Equal(t0) {
		t.Fatalf("after Set(t0) Now = %v", got)
	}
	var zero Manual
	if !zero.Now().IsZero() {
		t.Fatalf("zero Manual reads %v", zero.Now())
	}
}

func TestAfter(t *testing.T) {
	tests := []struct {
		name     string
		d        time.Duration
		steps    []time.Duration // advances before the check
		wantFire bool
		wantAt   time.Duration // value delivered, from t0
	}{
		{"zero fires at once", 0, nil, true, 0},
		{"negative fires at once", -time.Second, nil, true, 0},
		{"not before the deadline", time.Second, []time.Duration{999 * time.Millisecond}, false, 0},
		{"at the deadline", time.Second, []time.Duration{time.Second}, true, time.Second},
		{"past the deadline in steps", time.Second, []time.Duration{600 * time.Millisecond, 600 * time.Millisecond}, true, 1200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewManual(t0)
			ch := m.After(tt.d)
			for _, s := range tt.steps {
				m.Advance(s)
			}
			v, ok := fired(ch)
			if ok != tt.wantFire {
				t.Fatalf("fired = %v, want %v", ok, tt.wantFire)
			}
			if ok && !v.Equal(t0.Add(tt.wantAt)) {
				t.Errorf("delivered %v, want t0+%v", v, tt.wantAt)
			}
			if ok && m.Waiters() != 0 {
				t.Errorf("%d waiters after firing, want 0", m.Waiters())
			}
			m.Advance(time.Hour)
			if _, again := fired(ch); ok && again {
				t.Error("After fired twice")
			} else if !ok && !again {
				t.Error("After did not fire an hour past its deadline")
			}
		})
	}
}

func TestSetBackFiresNothing(t *testing.T) {
	m := NewManual(t0)
	ch := m.After(time.Second)
	m.Set(t0.Add(-time.Hour))
	if _, ok := fired(ch); ok {
		t.Fatal("moving back fired After")
	}
	m.Set(t0.Add(time.Second))
	if _, ok := fired(ch); !ok {
		t.Fatal("After did not fire at its deadline")
	}
}

func TestTicker(t *testing.T) {
	m := NewManual(t0)
	tick, stop := m.NewTicker(100 * time.Millisecond)
	m.Advance(50 * time.Millisecond)
	if _, ok := fired(tick); ok {
		t.Fatal("ticked before its period")
	}
	m.Advance(50 * time.Millisecond)
	if v, ok := fired(tick); !ok || !v.Equal(t0.Add(100*time.Millisecond)) {
		t.Fatalf("tick = %v %v, want t0+100ms", v, ok)
	}
	// Three periods at once while nobody reads: one tick is held, the
	// others dropped, and the next falls a period after the new time.
	m.Advance(300 * time.Millisecond)
	m.Advance(50 * time.Millisecond)
	if v, ok := fired(tick); !ok || !v.Equal(t0.Add(400*time.Millisecond)) {
		t.Fatalf("held tick = %v %v, want t0+400ms", v, ok)
	}
	if _, ok := fired(tick); ok {
		t.Fatal("dropped ticks were delivered")
	}
	m.Advance(50 * time.Millisecond)
	if v, ok := fired(tick); !ok || !v.Equal(t0.Add(500*time.Millisecond)) {
		t.Fatalf("tick = %v %v, want t0+500ms", v, ok)
	}
	stop()
	if m.Waiters() != 0 {
		t.Fatalf("%d waiters after stop, want 0", m.Waiters())
	}
	m.Advance(time.Second)
	if _, ok := fired(tick); ok {
		t.Fatal("stopped ticker ticked")
	}
	stop() // a second stop is harmless
}

func TestTickerPanicsOnNonPositive(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewTicker(0) did not panic")
		}
	}()
	NewManual(t0).NewTicker(0)
}

// TestSleep drives clock.Sleep on a Manual clock from another goroutine:
// the sleeper blocks until the clock is moved past its deadline.
func TestSleep(t *testing.T) {
	m := NewManual(t0)
	done := make(chan error, 1)
	go func() { done <- clock.Sleep(context.Background(), m, time.Minute) }()
	for m.Waiters() == 0 {
		time.Sleep(time.Millisecond)
	}
	m.Advance(59 * time.Second)
	select {
	case err := <-done:
		t.Fatalf("Sleep returned %v before its deadline", err)
	case <-time.After(10 * time.Millisecond):
	}
	m.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatalf("Sleep = %v", err)
	}
}

// TestConcurrent is for the race detector: readers, waiters and tickers on
// several goroutines while the clock moves.
func TestConcurrent(t *testing.T) {
	m := NewManual(t0)
	var wg sync.WaitGroup
	stopMoving := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stopMoving:
				return
			default:
				m.Advance(time.Millisecond)
			}
		}
	})
	var readers sync.WaitGroup
	for range 4 {
		readers.Go(func() {
			last := m.Now()
			for range 100 {
				now := m.Now()
				if now.Before(last) {
					t.Errorf("time went back: %v after %v", now, last)
				}
				last = now
				<-m.After(5 * time.Millisecond)
			}
			tick, stop := m.NewTicker(time.Millisecond)
			for range 10 {
				<-tick
			}
			stop()
		})
	}
	readers.Wait()
	close(stopMoving)
	wg.Wait()
	if m.Waiters() != 0 {
		t.Fatalf("%d waiters left", m.Waiters())
	}
}
