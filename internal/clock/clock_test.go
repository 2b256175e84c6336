package clock

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := Real{}
		start := c.Now()
		if err := Sleep(context.Background(), c, 3*time.Second); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("slept %v, want 3s", d)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := Sleep(ctx, c, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Sleep past the deadline = %v, want DeadlineExceeded", err)
		}
		if err := Sleep(context.Background(), c, -time.Second); err != nil {
			t.Errorf("negative sleep = %v", err)
		}
	})
}

func TestTicker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tick, stop := Real{}.NewTicker(100 * time.Millisecond)
		defer stop()
		start := time.Now()
		for range 3 {
			<-tick
		}
		if d := time.Since(start); d != 300*time.Millisecond {
			t.Errorf("three ticks took %v, want 300ms", d)
		}
	})
}
